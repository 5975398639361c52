"""Row-wise argmax (greedy decoding over a vocabulary), written the straightforward way: one
program per row, a loop over the row in blocks of 512 that reduces each block to its maximum
and first index of it, keeping the best so far (ties: the first index, as torch.argmax).
x is (rows, vocab) bf16; the result is (rows,) int64."""

import torch
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(x_ptr, out_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    best_val = tl.full((), float("-inf"), dtype=tl.float32)
    best_idx = tl.full((), 0, dtype=tl.int32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + row * row_stride + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        block_max = tl.max(x, axis=0)
        block_idx = tl.argmax(x, axis=0) + start
        better = block_max > best_val
        best_idx = tl.where(better, block_idx, best_idx)
        best_val = tl.where(better, block_max, best_val)
    tl.store(out_ptr + row, best_idx.to(tl.int64))


def argmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty(n_rows, device=x.device, dtype=torch.int64)
    argmax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK_SIZE=1024, num_warps=1)
    return out

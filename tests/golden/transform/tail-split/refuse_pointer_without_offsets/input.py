"""A loop whose select masks a value that does not span the block's offsets: a column of
per-row values broadcast against the key block by the comparison itself. Without the
comparison the sum would run over one column instead of BLOCK_N: the pass must refuse."""
import torch
import triton
import triton.language as tl


@triton.jit
def weighted_rows_kernel(x_ptr, out_ptr, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    x = tl.load(x_ptr + rows)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, n, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.sum(tl.where(cols[None, :] < n, x[:, None], 0.0), axis=1)
    tl.store(out_ptr + rows, acc)


def weighted_rows(x, n):
    out = torch.empty_like(x)
    weighted_rows_kernel[(x.numel() // 16,)](x, out, n, BLOCK_M=16, BLOCK_N=32)
    return out

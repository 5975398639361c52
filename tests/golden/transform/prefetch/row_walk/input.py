"""Row sums over blocks of columns, the offsets computed from the loop's variable."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(out_ptr, x_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols,
                    mask=cols < n_cols, other=0.0)
        acc += x.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def row_sum(x):
    out = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
    row_sum_kernel[(x.shape[0],)](out, x, x.shape[1], x.stride(0), BLOCK=256)
    return out

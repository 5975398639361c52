"""Row-wise softmax that moves its pointers to the row (`ptr += row * stride`), as Liger and
FlagGems write their row kernels."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    in_ptr += row * in_stride
    out_ptr += row * out_stride
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + cols, e / tl.sum(e, axis=0), mask=mask)


def softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(cols)
    softmax_rows[(rows,)](out, x, cols, x.stride(0), out.stride(0), BLOCK=BLOCK, num_warps=4)
    return out

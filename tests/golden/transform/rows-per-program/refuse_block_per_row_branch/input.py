"""Rows scaled down only when their peak passes 1: the branch depends on the row's values."""

import torch
import triton
import triton.language as tl


@triton.jit
def clip_rows(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
    peak = tl.max(tl.abs(x), axis=0)
    if peak > 1.0:
        x = x / peak
    tl.store(y_ptr + row * stride + cols, x, mask=cols < n)


def clip(x):
    y = torch.empty_like(x)
    clip_rows[(x.shape[0],)](x, y, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return y

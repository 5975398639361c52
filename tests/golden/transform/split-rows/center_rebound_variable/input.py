"""Each row minus its mean: the loop variable bound again with an alignment hint, the launch
over several lines with a trailing comma."""

import torch
import triton
import triton.language as tl


@triton.jit
def center_rows(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    for start in range(0, N, BLOCK):
        start = tl.multiple_of(start, BLOCK)
        offs = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(x_ptr + row * stride + offs, mask=offs < N, other=0.0), axis=0)
    mean = total / N
    for start in range(0, N, BLOCK):
        start = tl.multiple_of(start, BLOCK)
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + offs, mask=offs < N, other=0.0)
        tl.store(y_ptr + row * stride + offs, x - mean, mask=offs < N)


def center(x):
    y = torch.empty_like(x)
    center_rows[(x.shape[0],)](
        x,
        y,
        x.shape[1],
        x.stride(0),
        BLOCK=256,
    )
    return y

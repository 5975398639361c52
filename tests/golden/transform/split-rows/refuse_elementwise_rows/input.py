"""Each row scaled by its own factor: one walk over the row that carries nothing."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, s_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    s = tl.load(s_ptr + row)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + offs, mask=offs < N)
        tl.store(y_ptr + row * N + offs, x * s, mask=offs < N)


def scale(x, s):
    y = torch.empty_like(x)
    scale_rows[(x.shape[0],)](x, s, y, x.shape[1], BLOCK=1024)
    return y

"""Fixture register-spills: a 16384-wide softmax row held by one warp (512 floats a thread)."""

import torch
import triton
import triton.language as tl

KERNEL_NAME = "register_spills_kernel"


@triton.jit
def register_spills_kernel(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n + cols, mask=cols < n, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * n + cols, y, mask=cols < n)


def prepare():
    rows, n = 2048, 16384
    x = torch.randn(rows, n, device="cuda")
    out = torch.empty_like(x)
    return lambda: register_spills_kernel[(rows,)](out, x, n, BLOCK=16384, num_warps=1)

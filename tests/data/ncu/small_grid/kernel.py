"""Fixture small-grid: a 64 MiB sum done by 8 programs, so 124 of 132 SMs idle."""

import torch
import triton
import triton.language as tl

KERNEL_NAME = "small_grid_kernel"


@triton.jit
def small_grid_kernel(x_ptr, out_ptr, n, PROGRAMS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(pid * BLOCK, n, PROGRAMS * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


def prepare():
    n = 16 * 2**20
    x = torch.randn(n, device="cuda")
    out = torch.empty(8, device="cuda")
    return lambda: small_grid_kernel[(8,)](x, out, n, PROGRAMS=8, BLOCK=1024, num_warps=4)

"""Fixture uncoalesced-access: each lane loads a float 32 elements after its neighbour's, so
every 4-byte load fetches its own 32-byte sector (1/8 of each sector used)."""

import torch
import triton
import triton.language as tl

KERNEL_NAME = "strided_load_kernel"


@triton.jit
def strided_load_kernel(x_ptr, out_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs * STRIDE, mask=mask)
    tl.store(out_ptr + offs, v * 2, mask=mask)


def prepare():
    n = 4 * 2**20
    x = torch.randn(n * 32, device="cuda")
    out = torch.empty(n, device="cuda")
    return lambda: strided_load_kernel[(triton.cdiv(n, 1024),)](x, out, n, STRIDE=32, BLOCK=1024, num_warps=4)

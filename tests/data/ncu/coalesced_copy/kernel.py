"""Control: a contiguous streaming copy at the DRAM roofline; nothing to find."""

import torch
import triton
import triton.language as tl

KERNEL_NAME = "coalesced_copy_kernel"


@triton.jit
def coalesced_copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, v * 2, mask=mask)


def prepare():
    n = 64 * 2**20
    x = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")
    return lambda: coalesced_copy_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)

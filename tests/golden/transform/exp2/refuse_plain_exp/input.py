"""Elementwise exp of loaded values: no scale to fold log2(e) into and no difference to fuse
it with (the rewrite would move the multiplication, not remove it)."""

import torch
import triton
import triton.language as tl


@triton.jit
def exp_kernel(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(in_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, tl.exp(x), mask=offs < n)


def exp(x):
    out = torch.empty_like(x)
    exp_kernel[(triton.cdiv(x.numel(), 1024),)](out, x, x.numel(), BLOCK=1024)
    return out

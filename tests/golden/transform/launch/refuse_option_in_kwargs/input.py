"""A launch whose register cap comes from a dict it unpacks: writing maxnreg at the launch too
would give it twice."""

import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def run(x):
    n = x.numel()
    opts = {"maxnreg": 128}
    k[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024, **opts)
    return x

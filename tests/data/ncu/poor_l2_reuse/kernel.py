"""Fixture poor-l2-reuse: program p reads block p % NB of a 256 MiB array, so each block is
read 4 times, 256 MiB of traffic apart: L2 (60 MiB) has long evicted it each time. The
kernel must move 256 MiB (expected.json's context.bytes); DRAM moves about 1 GiB."""

import torch
import triton
import triton.language as tl

KERNEL_NAME = "poor_l2_reuse_kernel"


@triton.jit
def poor_l2_reuse_kernel(x_ptr, out_ptr, NB, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = (pid % NB) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    tl.store(out_ptr + pid, tl.sum(v, axis=0))


def prepare():
    block = 4096
    nb = 64 * 2**20 // block
    x = torch.randn(nb * block, device="cuda")
    out = torch.empty(4 * nb, device="cuda")
    return lambda: poor_l2_reuse_kernel[(4 * nb,)](x, out, nb, BLOCK=block, num_warps=4)

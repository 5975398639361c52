"""Fixture long-stalls (long scoreboard): each lane follows a random permutation 2000 times,
every load depending on the one before; one warp per SM, nothing to hide the latency."""

import torch
import triton
import triton.language as tl

KERNEL_NAME = "pointer_chase_kernel"


@triton.jit
def pointer_chase_kernel(next_ptr, out_ptr, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = offs
    for _ in range(STEPS):
        idx = tl.load(next_ptr + idx)
    tl.store(out_ptr + offs, idx)


def prepare():
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    nxt = torch.randperm(64 * 2**20, device="cuda", dtype=torch.int64).to(torch.int32)
    out = torch.empty(sms * 32, device="cuda", dtype=torch.int32)
    return lambda: pointer_chase_kernel[(sms,)](nxt, out, STEPS=2000, BLOCK=32, num_warps=1)

"""Fixture tail-effect: equal compute-bound programs, 1.1 waves of them: the second wave
keeps a tenth of the GPU busy. The grid is sized from the compiled kernel's registers."""

import torch
import triton
import triton.language as tl

KERNEL_NAME = "tail_effect_kernel"


@triton.jit
def tail_effect_kernel(x_ptr, out_ptr, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.load(x_ptr + offs)
    for _ in range(ITERS):
        acc = acc * 1.0001 + 0.5
    tl.store(out_ptr + offs, acc)


def _blocks_per_sm(regs, warps):
    per_warp = -(-regs * 32 // 256) * 256
    return max(1, min(64 // warps, 32, (65536 // per_warp) // warps))


def prepare():
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    warps, block = 4, 128
    max_grid = 64 * sms
    x = torch.randn(max_grid * block, device="cuda")
    out = torch.empty_like(x)
    k = tail_effect_kernel.warmup(x, out, ITERS=4096, BLOCK=block, num_warps=warps, grid=(1,))
    k._init_handles()
    grid = int(1.1 * _blocks_per_sm(k.n_regs, warps) * sms)
    return lambda: tail_effect_kernel[(grid,)](x, out, ITERS=4096, BLOCK=block, num_warps=warps)

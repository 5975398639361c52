"""Fixture low-occupancy (shared memory): each program's dot stages 64x512 and 512x64 fp16
tiles, 128 KiB of shared memory, so one block of 4 warps fits an SM (6% occupancy)."""

import torch
import triton
import triton.language as tl

KERNEL_NAME = "low_occupancy_smem_kernel"


@triton.jit
def low_occupancy_smem_kernel(a_ptr, b_ptr, c_ptr, TILES: tl.constexpr):
    pid = tl.program_id(0)
    rm = tl.arange(0, 64)
    rk = tl.arange(0, 512)
    t = pid % TILES
    a = tl.load(a_ptr + t * 64 * 512 + rm[:, None] * 512 + rk[None, :])
    b = tl.load(b_ptr + t * 512 * 64 + rk[:, None] * 64 + rm[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + pid * 64 * 64 + rm[:, None] * 64 + rm[None, :], c)


def prepare():
    tiles, programs = 64, 132 * 24
    a = torch.randn(tiles * 64 * 512, device="cuda", dtype=torch.float16)
    b = torch.randn(tiles * 512 * 64, device="cuda", dtype=torch.float16)
    c = torch.empty(programs * 64 * 64, device="cuda", dtype=torch.float32)
    return lambda: low_occupancy_smem_kernel[(programs,)](a, b, c, TILES=tiles, num_warps=4, num_stages=1)

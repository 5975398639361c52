"""Matrix transpose, out = x.T (contiguous), written the straightforward way: one program per
32x32 tile, loaded along x's rows and stored along out's columns.
x is (M, N) bf16; out is (N, M) bf16."""

import torch
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    tl.store(out_ptr + cols[None, :] * M + rows[:, None], tile, mask=mask)


def transpose(x):
    M, N = x.shape
    x = x.contiguous()
    out = torch.empty((N, M), device=x.device, dtype=x.dtype)
    BLOCK_M = 128
    BLOCK_N = 128
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    transpose_kernel[grid](x, out, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8)
    return out

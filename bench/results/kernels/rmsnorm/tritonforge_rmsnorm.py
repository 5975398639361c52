"""RMS norm forward (Llama), written the straightforward way: one program per row, two passes
over the row in blocks of 512 (the mean of squares, then the scaled output), fp32 arithmetic.
x and y are (rows, N) bf16; weight is (N,) bf16."""

import torch
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    sq = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        sq += x * x
    rstd = tl.rsqrt(tl.sum(sq, axis=0) / N + eps)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * stride + cols, (x * rstd * w).to(tl.bfloat16), mask=cols < N)


def rmsnorm(x, weight, eps=1e-6):
    M, N = x.shape
    x = x.contiguous()
    y = torch.empty_like(x)
    rmsnorm_kernel[(M,)](x, weight, y, x.stride(0), N, eps, BLOCK_SIZE=8192, num_warps=8, num_stages=2)
    return y

"""Layer norm forward, written the straightforward way: one program per row, the whole row in
one block (the next power of two of the row length), mean and variance in fp32, Triton's
default warps. x and y are (rows, N) bf16; weight and bias are (N,) bf16."""

import torch
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(y_ptr + row * N + cols, y.to(tl.bfloat16), mask=mask)


def layernorm(x, weight, bias, eps=1e-5):
    M, N = x.shape
    x = x.contiguous()
    y = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(N)
    layernorm_kernel[(M,)](x, weight, bias, y, N, eps, BLOCK_N=BLOCK_N)
    return y

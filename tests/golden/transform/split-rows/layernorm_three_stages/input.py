"""Layer norm forward, one row per program, the whole row in one block."""

import torch
import triton
import triton.language as tl


@triton.jit
def layernorm_row(x_ptr, w_ptr, b_ptr, y_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    # statistics in fp32
    # column-loop: the row is processed BLOCK columns at a time, in 3 passes
    row_sum_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for col_start in range(0, N, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        row_sum_acc += x
    mean = tl.sum(row_sum_acc, axis=0) / N
    row_sum_acc_2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for col_start in range(0, N, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x - mean, 0.0)
        row_sum_acc_2 += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(row_sum_acc_2, axis=0) / N + eps)
    for col_start in range(0, N, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x - mean, 0.0)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        y = d * rstd * w + b
        tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def layernorm(x, weight, bias, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    BLOCK = min(triton.next_power_of_2(N), 2048)
    layernorm_row[(M,)](x, weight, bias, y, x.stride(0), N, eps, BLOCK=BLOCK, num_warps=8)
    return y

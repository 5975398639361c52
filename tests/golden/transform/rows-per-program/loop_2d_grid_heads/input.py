"""RMS norm per (token, head): a 2-D grid, tokens on axis 0 and heads on axis 1, each program
normalizing one head's 64 values of one token."""

import torch
import triton
import triton.language as tl


@triton.jit
def head_rms_norm(x_ptr, w_ptr, y_ptr, stride_t, stride_h, eps, D: tl.constexpr):
    token = tl.program_id(0)
    head = tl.program_id(1)
    offs = tl.arange(0, D)
    base = token * stride_t + head * stride_h
    x = tl.load(x_ptr + base + offs).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    w = tl.load(w_ptr + offs).to(tl.float32)
    tl.store(y_ptr + base + offs, (x * rstd * w).to(tl.float16))


def rms_norm(x, w, eps=1e-6):
    tokens, heads, d = x.shape
    y = torch.empty_like(x)
    head_rms_norm[(tokens, heads)](x, w, y, x.stride(0), x.stride(1), eps, D=d)
    return y

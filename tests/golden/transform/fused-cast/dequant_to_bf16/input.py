"""Block fp8 weights times one float32 scale per 128 x 128 block, written in float32 (the
default dtype) and returned in bfloat16."""

import torch
import triton
import triton.language as tl


def dequant(x, s, block=128):
    M, N = x.size()
    y = torch.empty_like(x, dtype=torch.get_default_dtype())
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK"]), triton.cdiv(N, meta["BLOCK"]))
    dequant_kernel[grid](x, s, y, M, N, BLOCK=block)
    return y.to(torch.bfloat16)


@triton.jit
def dequant_kernel(x_ptr, s_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    n = tl.cdiv(N, BLOCK)
    offs_m = pid_m * BLOCK + tl.arange(0, BLOCK)
    offs_n = pid_n * BLOCK + tl.arange(0, BLOCK)
    offs = offs_m[:, None] * N + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    s = tl.load(s_ptr + pid_m * n + pid_n)
    tl.store(y_ptr + offs, x * s, mask=mask)

"""Planted fault: a dot whose 64x1024 and 1024x64 fp16 operand tiles need 256 KiB of shared memory."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, xh_ptr, yh_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    rm = tl.arange(0, 64)
    rk = tl.arange(0, 1024)
    a = tl.load(xh_ptr + rm[:, None] * 1024 + rk[None, :])
    b = tl.load(yh_ptr + rk[:, None] * 64 + rm[None, :])
    c = tl.dot(a, b)
    tl.store(out_ptr + offs, 2 * x + y + tl.sum(tl.sum(c, axis=1), axis=0) * 0.0, mask=mask)


def scale_add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, x.view(torch.float16), y.view(torch.float16), n, BLOCK=1024)
    return out

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, n, alpha):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def scale(x, alpha=2.0):
    out = torch.empty_like(x)
    n = x.numel()
    grid = (triton.cdiv(n, 512),)
    scale_kernel[grid](x, out, 512, n, alpha, num_warps=4)
    return out

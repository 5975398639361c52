import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({'BLOCK': 512}, num_warps=4),
        triton.Config({'BLOCK': 256}, num_warps=1),
        triton.Config({'BLOCK': 512}, num_warps=2),
        triton.Config({'BLOCK': 1024}, num_warps=4),
        triton.Config({'BLOCK': 2048}, num_warps=8),
        triton.Config({'BLOCK': 4096}, num_warps=16),
    ],
    key=['n'],
)
@triton.jit
def scale_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, n, alpha):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def scale(x, alpha=2.0):
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda META: (triton.cdiv(n, META['BLOCK']),)
    scale_kernel[grid](x, out, n=n, alpha=alpha)
    return out

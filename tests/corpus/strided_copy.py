"""Copy every STRIDE-th element: with STRIDE > 1 neighbouring threads are STRIDE elements
apart, so a warp touches one sector per thread."""
import torch
import triton
import triton.language as tl


@triton.jit
def strided_copy_kernel(x_ptr, y_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs * STRIDE, mask=offs < n)
    tl.store(y_ptr + offs, v, mask=offs < n)


def strided_copy(x, stride):
    n = x.numel() // stride
    y = torch.empty((n,), device=x.device, dtype=x.dtype)
    strided_copy_kernel[(triton.cdiv(n, 1024),)](x, y, n, STRIDE=stride, BLOCK=1024)
    return y

"""Naive transpose: each program writes one output row by reading one input column, a
1-D access with the input's row stride between neighbouring elements (uncoalesced)."""
import torch
import triton
import triton.language as tl


@triton.jit
def transpose_naive_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_ym, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    for m0 in range(0, M, BLOCK):
        rows = m0 + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + rows * stride_xm + col, mask=rows < M)
        tl.store(y_ptr + col * stride_ym + rows, v, mask=rows < M)


def transpose(x):
    M, N = x.shape
    y = torch.empty((N, M), device=x.device, dtype=x.dtype)
    transpose_naive_kernel[(N,)](x, y, M, N, x.stride(0), y.stride(0), BLOCK=1024)
    return y

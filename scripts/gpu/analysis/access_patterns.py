"""Kernels built to show what `tritonforge analyze` predicts about memory accesses: 128-bit
coalesced, 32-bit coalesced, strided by 2 and by 32 elements, a tiled transpose (coalesced on
both sides) and a naive one (a strided column read). `run_all` launches each once."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_vec_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def copy_narrow_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def copy_stride2_kernel(x_ptr, y_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * STRIDE, mask=offs < n), mask=offs < n)


@triton.jit
def copy_stride32_kernel(x_ptr, y_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * STRIDE, mask=offs < n), mask=offs < n)


@triton.jit
def transpose_tiled_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_ym, BLOCK: tl.constexpr):
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rn = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[None, :] * stride_ym + rm[:, None], tile, mask=mask)


@triton.jit
def transpose_naive_kernel(x_ptr, y_ptr, M, stride_xm, stride_ym, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    for m0 in range(0, M, BLOCK):
        rows = m0 + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + rows * stride_xm + col, mask=rows < M)
        tl.store(y_ptr + col * stride_ym + rows, v, mask=rows < M)


def run_all(x, big, y, square, square_t):
    n = x.numel()
    copy_vec_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024, num_warps=4)
    copy_narrow_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128, num_warps=4)
    copy_stride2_kernel[(triton.cdiv(n, 1024),)](big, y, n, STRIDE=2, BLOCK=1024, num_warps=4)
    copy_stride32_kernel[(triton.cdiv(n, 1024),)](big, y, n, STRIDE=32, BLOCK=1024, num_warps=4)
    M, N = square.shape
    transpose_tiled_kernel[(triton.cdiv(M, 64), triton.cdiv(N, 64))](square, square_t, M, N, square.stride(0),
                                                                     square_t.stride(0), BLOCK=64, num_warps=4)
    transpose_naive_kernel[(N,)](square, square_t, M, square.stride(0), square_t.stride(0), BLOCK=1024, num_warps=4)
    return y

"""Prefix sums along rows with tl.cumsum, and a running maximum with tl.associative_scan."""
import torch
import triton
import triton.language as tl


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def scans_kernel(x_ptr, sum_ptr, max_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
    s = tl.cumsum(x, axis=0)
    m = tl.associative_scan(x, 0, _max_combine)
    tl.store(sum_ptr + row * stride + cols, s, mask=cols < N)
    tl.store(max_ptr + row * stride + cols, m, mask=cols < N)


def scans(x):
    M, N = x.shape
    s = torch.empty_like(x)
    m = torch.empty_like(x)
    scans_kernel[(M,)](x, s, m, N, x.stride(0), BLOCK=triton.next_power_of_2(N))
    return s, m

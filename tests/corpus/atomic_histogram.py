"""Histogram: each program bins a block of values and adds ones into the bins atomically
(a scatter: the address depends on the loaded data)."""
import torch
import triton
import triton.language as tl


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, n_bins, lo, hi, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = ((x - lo) / (hi - lo) * n_bins).to(tl.int32)
    b = tl.minimum(tl.maximum(b, 0), n_bins - 1)
    tl.atomic_add(hist_ptr + b, 1, mask=mask, sem="relaxed")


def histogram(x, n_bins, lo, hi):
    hist = torch.zeros((n_bins,), device=x.device, dtype=torch.int32)
    n = x.numel()
    histogram_kernel[(triton.cdiv(n, 1024),)](x, hist, n, n_bins, lo, hi, BLOCK=1024)
    return hist

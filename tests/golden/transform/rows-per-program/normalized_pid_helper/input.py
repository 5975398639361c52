"""Row-wise RMS norm as FlagGems writes its kernels: the program id comes through a @triton.jit
helper that widens it to int64."""

import torch
import triton
import triton.language as tl


@triton.jit
def program_id(
    axis: int,
) -> tl.tensor:
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def rms_norm_rows(out_ptr, in_ptr, w_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    var = tl.sum(x * x, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    y = x / tl.sqrt(var + eps) * w
    tl.store(out_ptr + row * n_cols + cols, y, mask=mask)


def rms_norm(x, w, eps=1e-6):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    rms_norm_rows[(n_rows,)](out, x, w, n_cols, eps, BLOCK=BLOCK, num_warps=4)
    return out

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
def rms_norm_rows(out_ptr, in_ptr, w_ptr, n_cols, eps, BLOCK: tl.constexpr,
                  ROWS_PER_PROGRAM: tl.constexpr, n_rows):
    # rows-per-program: each program handles ROWS_PER_PROGRAM consecutive rows
    first_row = tl.program_id(0) * ROWS_PER_PROGRAM
    for pid_0 in range(first_row, min(first_row + ROWS_PER_PROGRAM, n_rows)):
        row = pid_0.to(tl.int64)
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
    rows_per_program = 4
    rms_norm_rows[(triton.cdiv(n_rows, rows_per_program),)](out, x, w, n_cols, eps, BLOCK=BLOCK,
                                                            ROWS_PER_PROGRAM=rows_per_program,
                                                            n_rows=n_rows, num_warps=4)
    return out

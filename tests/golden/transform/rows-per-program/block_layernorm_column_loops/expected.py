"""Layer norm forward, written the straightforward way: one program per row, three passes
over the row (mean, variance, normalize) in blocks of 256."""

import torch
import triton
import triton.language as tl


@triton.jit
def layernorm_fwd(x_ptr, w_ptr, b_ptr, y_ptr, stride, N, eps, BLOCK_SIZE: tl.constexpr,
                  ROWS_PER_PROGRAM: tl.constexpr, n_rows):
    # rows-per-program: this program takes ROWS_PER_PROGRAM rows as one tile, a row per tile row
    row = tl.program_id(0) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)[:, None]
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    total = tl.zeros((ROWS_PER_PROGRAM, BLOCK_SIZE), dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=(cols < N) & (row < n_rows), other=0.0).to(tl.float32)
        total += x
    mean = tl.sum(total, axis=1, keep_dims=True) / N
    sq = tl.zeros((ROWS_PER_PROGRAM, BLOCK_SIZE), dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=(cols < N) & (row < n_rows), other=0.0).to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.0)
        sq += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=1, keep_dims=True) / N + eps)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask & (row < n_rows), other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        y = (x - mean) * rstd * w + b
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask & (row < n_rows))


def layernorm(x, weight, bias, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    rows_per_program = 4
    layernorm_fwd[(triton.cdiv(M, rows_per_program),)](x, weight, bias, y, x.stride(0), N, eps, BLOCK_SIZE=256,
                                                       ROWS_PER_PROGRAM=rows_per_program, n_rows=M)
    return y

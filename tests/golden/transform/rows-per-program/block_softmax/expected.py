"""Row-wise softmax, written the straightforward way: one program per row, the whole row
in one block, four warps."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr,
                 ROWS_PER_PROGRAM: tl.constexpr, n_rows):
    # rows-per-program: this program takes ROWS_PER_PROGRAM rows as one tile, a row per tile row
    row = tl.program_id(0) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)[:, None]
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask & (row < n_rows), other=float("-inf"))
    x = x - tl.max(x, axis=1, keep_dims=True)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=1, keep_dims=True)
    tl.store(out_ptr + row * out_stride + cols, y, mask=mask & (row < n_rows))


def softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(cols)
    rows_per_program = 16
    softmax_rows[(triton.cdiv(rows, rows_per_program),)](out, x, cols, x.stride(0), out.stride(0), BLOCK=BLOCK,
                                                         ROWS_PER_PROGRAM=rows_per_program,
                                                         n_rows=rows, num_warps=4)
    return out

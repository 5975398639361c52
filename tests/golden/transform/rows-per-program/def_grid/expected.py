"""Row-wise softmax whose launcher names its grid with a nested def, as many projects write
it (`def grid(meta): return (...)`)."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr,
                 ROWS_PER_PROGRAM: tl.constexpr, n_rows):
    # rows-per-program: each program handles ROWS_PER_PROGRAM consecutive rows
    first_row = tl.program_id(0) * ROWS_PER_PROGRAM
    for row in range(first_row, min(first_row + ROWS_PER_PROGRAM, n_rows)):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_stride + cols, y, mask=mask)


def softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)

    rows_per_program = 8
    def grid(meta):
        return (triton.cdiv(rows, rows_per_program),)

    softmax_rows[grid](out, x, cols, x.stride(0), out.stride(0), BLOCK=triton.next_power_of_2(cols),
                       ROWS_PER_PROGRAM=rows_per_program, n_rows=rows)
    return out

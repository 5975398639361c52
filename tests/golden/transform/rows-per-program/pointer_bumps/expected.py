"""Row-wise softmax that moves its pointers to the row (`ptr += row * stride`), as Liger and
FlagGems write their row kernels."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr,
                 ROWS_PER_PROGRAM: tl.constexpr, n_rows):
    # rows-per-program: each program handles ROWS_PER_PROGRAM consecutive rows
    first_row = tl.program_id(0) * ROWS_PER_PROGRAM
    in_ptr_in = in_ptr
    out_ptr_in = out_ptr
    for row in range(first_row, min(first_row + ROWS_PER_PROGRAM, n_rows)):
        in_ptr = in_ptr_in
        out_ptr = out_ptr_in
        in_ptr += row * in_stride
        out_ptr += row * out_stride
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + cols, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(out_ptr + cols, e / tl.sum(e, axis=0), mask=mask)


def softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(cols)
    rows_per_program = 4
    softmax_rows[(triton.cdiv(rows, rows_per_program),)](out, x, cols, x.stride(0), out.stride(0), BLOCK=BLOCK,
                                                         ROWS_PER_PROGRAM=rows_per_program,
                                                         n_rows=rows, num_warps=4)
    return out

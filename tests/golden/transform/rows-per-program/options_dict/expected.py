"""Row-wise softmax, one program per row, whose launch options come from a dict the launch
unpacks (num_warps, and num_stages on another device): the dict hides no kernel parameter."""

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
    BLOCK = triton.next_power_of_2(cols)
    options = {"num_warps": 4}
    if x.device.type == "xpu":
        options.update({"num_stages": 2})
    rows_per_program = 4
    softmax_rows[(triton.cdiv(rows, rows_per_program),)](out, x, cols, x.stride(0), out.stride(0), BLOCK=BLOCK, **options,
                                                         ROWS_PER_PROGRAM=rows_per_program,
                                                         n_rows=rows)
    return out

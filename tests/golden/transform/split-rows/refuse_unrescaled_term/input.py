"""Row-wise softmax, written the straightforward way: one program per row, the whole row
in one block, four warps."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    # column-loop: the row is processed BLOCK columns at a time, in 2 passes (max and sum online)
    row_max = tl.max(tl.full((BLOCK,), float("-inf"), dtype=tl.float32), axis=0)
    row_sum = tl.sum(tl.zeros((BLOCK,), dtype=tl.float32), axis=0)
    for col_start in range(0, n_cols, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
        row_max_new = tl.maximum(row_max, tl.max(x, axis=0))
        row_max_safe = tl.where(row_max_new == float("-inf"), 0.0, row_max_new)
        row_sum = row_sum * tl.exp(row_max - row_max_safe) + tl.sum(x, axis=0)
        row_max = row_max_new
    for col_start in range(0, n_cols, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
        x = x - row_max
        e = tl.exp(x)
        y = e / row_sum
        tl.store(out_ptr + row * out_stride + cols, y, mask=mask)


def softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    BLOCK = min(triton.next_power_of_2(cols), 4096)
    softmax_rows[(rows,)](out, x, cols, x.stride(0), out.stride(0), BLOCK=BLOCK, num_warps=4)
    return out

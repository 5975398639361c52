"""Row-wise softmax, written the straightforward way: one program per row, the whole row
in one block, four warps."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    # column-loop: the row is processed BLOCK columns at a time, in 3 passes
    row_max_acc = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for col_start in range(0, n_cols, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
        row_max_acc = tl.maximum(row_max_acc, x)
    row_max = tl.max(row_max_acc, axis=0)
    row_sum_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for col_start in range(0, n_cols, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
        x = x - row_max
        e = tl.exp(x)
        row_sum_acc += e
    row_sum = tl.sum(row_sum_acc, axis=0)
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

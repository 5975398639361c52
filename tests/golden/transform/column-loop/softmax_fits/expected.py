"""Row-wise softmax whose block and warps come together from a settings helper (a tuple
unpacked at run time), as many projects write it: the block cannot be searched, but
column-loop makes it a step and caps it at the launch."""

import torch
import triton
import triton.language as tl


def row_settings(n):
    block = triton.next_power_of_2(n)
    return block, (32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4)


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr):
    # column-loop: a row of fewer than 8192 columns stays in one block, as written; longer rows are walked in chunks of 4096
    if BLOCK < 8192:
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
        m = tl.max(x, axis=0)
        e = tl.exp(x - m)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_stride + cols, y, mask=mask)
    else:
        row = tl.program_id(0)
        # column-loop: the row is processed 4096 columns at a time, in 2 passes (max and sum online)
        row_max = tl.max(tl.full((4096,), float("-inf"), dtype=tl.float32), axis=0)
        row_sum = tl.sum(tl.zeros((4096,), dtype=tl.float32), axis=0)
        for col_start in range(0, n_cols, 4096):
            cols = col_start + tl.arange(0, 4096)
            mask = cols < n_cols
            x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
            row_max_new = tl.maximum(row_max, tl.max(x, axis=0))
            row_max_safe = tl.where(row_max_new == float("-inf"), 0.0, row_max_new)
            row_sum = row_sum * tl.exp(row_max - row_max_safe) + tl.sum(tl.exp(x - row_max_safe), axis=0)
            row_max = row_max_new
        m = row_max
        for col_start in range(0, n_cols, 4096):
            cols = col_start + tl.arange(0, 4096)
            mask = cols < n_cols
            x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
            e = tl.exp(x - m)
            y = e / row_sum
            tl.store(out_ptr + row * out_stride + cols, y, mask=mask)


def softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    BLOCK, warps = row_settings(cols)
    softmax_rows[(rows,)](out, x, cols, x.stride(0), out.stride(0), BLOCK=min(BLOCK, 8192), num_warps=warps)
    return out

"""Row-wise log-softmax of half-precision rows, computed in fp32: one program per row, the
whole row in one block."""

import torch
import triton
import triton.language as tl


@triton.jit
def log_softmax_rows(out_ptr, in_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    # column-loop: the row is processed BLOCK columns at a time, in 2 passes (max and sum online)
    row_max = tl.max(tl.full((BLOCK,), float("-inf"), dtype=tl.float32), axis=0)
    row_sum = tl.sum(tl.zeros((BLOCK,), dtype=tl.float32), axis=0)
    for col_start in range(0, n_cols, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
        row_max_new = tl.maximum(row_max, tl.max(x, axis=0))
        row_max_safe = tl.where(row_max_new == float("-inf"), 0.0, row_max_new)
        row_sum = row_sum * tl.exp(row_max - row_max_safe) + tl.sum(tl.exp(x - row_max_safe), axis=0)
        row_max = row_max_new
    m = row_max
    total = row_sum
    lse = m + tl.log(total)
    for col_start in range(0, n_cols, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(out_ptr + row * stride + cols, (x - lse).to(tl.float16), mask=mask)


def log_softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    BLOCK = min(triton.next_power_of_2(cols), 2048)
    log_softmax_rows[(rows,)](out, x, cols, x.stride(0), BLOCK=BLOCK, num_warps=8)
    return out

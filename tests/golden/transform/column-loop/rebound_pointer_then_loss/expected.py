"""Per-row negative log-softmax and the loss at each row's target, one program per row and
the whole row in one block: the pointer arguments are rebound to row pointers, and after the
row is stored a barrier orders the store before the scalar load of the target's value."""

import torch
import triton
import triton.language as tl


@triton.jit
def nll_rows(X, OUT, TARGET, LOSS, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    target = tl.load(TARGET + row)
    AT_TARGET = OUT + row * n_cols + target
    # column-loop: the row is processed BLOCK columns at a time, in 2 passes (max and sum online)
    row_max = tl.max(tl.full((BLOCK,), float("-inf"), dtype=tl.float32), axis=0)
    row_sum = tl.sum(tl.zeros((BLOCK,), dtype=tl.float32), axis=0)
    for col_start in range(0, n_cols, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        X_row = X + row * n_cols + cols
        x = tl.load(X_row, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        row_max_new = tl.maximum(row_max, tl.max(x, axis=0))
        row_max_safe = tl.where(row_max_new == float("-inf"), 0.0, row_max_new)
        row_sum = row_sum * tl.exp(row_max - row_max_safe) + tl.sum(tl.exp(x - row_max_safe), axis=0)
        row_max = row_max_new
    for col_start in range(0, n_cols, BLOCK):
        cols = col_start + tl.arange(0, BLOCK)
        X_row = X + row * n_cols + cols
        OUT_ROW = OUT + row * n_cols + cols
        x = tl.load(X_row, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        x = x - row_max
        nll = tl.log(row_sum) - x
        tl.store(OUT_ROW, nll, mask=cols < n_cols)
    tl.debug_barrier()
    picked = tl.load(AT_TARGET)
    tl.store(LOSS + row, picked)


def nll(x, target):
    rows, cols = x.shape
    out = torch.empty_like(x, dtype=torch.float32)
    loss = torch.empty(rows, device=x.device, dtype=torch.float32)
    nll_rows[(rows,)](x, out, target, loss, cols, BLOCK=min(triton.next_power_of_2(cols), 4096), num_warps=8)
    return out, loss

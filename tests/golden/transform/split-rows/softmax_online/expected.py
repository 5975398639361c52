"""Row-wise softmax, written the straightforward way: one program per row, the whole row
in one block, four warps."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr, split_parts,
                 SPLIT_ROWS: tl.constexpr,
                 SPLIT_STAGE: tl.constexpr):
    # split-rows: SPLIT_ROWS programs per row, a chunk of the columns each; stage k reduces its chunk of
    # reduction loop k to partial values, later stages combine the row's partials
    part = tl.program_id(1)
    part_base = tl.program_id(0) * SPLIT_ROWS
    part_ids = part_base + tl.arange(0, SPLIT_ROWS)
    row = tl.program_id(0)
    # column-loop: the row is processed BLOCK columns at a time, in 2 passes (max and sum online)
    row_max = tl.max(tl.full((BLOCK,), float("-inf"), dtype=tl.float32), axis=0)
    row_sum = tl.sum(tl.zeros((BLOCK,), dtype=tl.float32), axis=0)
    if SPLIT_STAGE == 0:
        chunk = tl.cdiv(tl.cdiv(n_cols, SPLIT_ROWS), BLOCK) * BLOCK
        chunk_lo = part * chunk
        for col_start in range(chunk_lo, tl.minimum(chunk_lo + chunk, n_cols), BLOCK):
            cols = col_start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
            row_max_new = tl.maximum(row_max, tl.max(x, axis=0))
            row_max_safe = tl.where(row_max_new == float("-inf"), 0.0, row_max_new)
            row_sum = row_sum * tl.exp(row_max - row_max_safe) + tl.sum(tl.exp(x - row_max_safe), axis=0)
            row_max = row_max_new
        tl.store(split_parts + (part_base + part) * 2 + 0, row_sum.to(tl.float64))
        tl.store(split_parts + (part_base + part) * 2 + 1, row_max.to(tl.float64))
    else:
        row_max_parts = tl.load(split_parts + part_ids * 2 + 1).to(tl.float32)
        row_max = tl.max(row_max_parts, axis=0)
        row_sum_parts = tl.load(split_parts + part_ids * 2 + 0).to(tl.float32)
        row_sum = tl.sum(row_sum_parts * tl.exp(row_max_parts - (tl.where(row_max == float("-inf"), 0.0, row_max))), axis=0)
        chunk_2 = tl.cdiv(tl.cdiv(n_cols, SPLIT_ROWS), BLOCK) * BLOCK
        chunk_lo_2 = part * chunk_2
        for col_start in range(chunk_lo_2, tl.minimum(chunk_lo_2 + chunk_2, n_cols), BLOCK):
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
    split_rows = 4
    split_parts = torch.empty(rows * split_rows * 2, dtype=torch.float64, device=out.device)
    softmax_rows[(rows, split_rows)](out, x, cols, x.stride(0), out.stride(0), BLOCK=BLOCK, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=0, num_warps=4)
    softmax_rows[(rows, split_rows)](out, x, cols, x.stride(0), out.stride(0), BLOCK=BLOCK, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=1, num_warps=4)
    return out

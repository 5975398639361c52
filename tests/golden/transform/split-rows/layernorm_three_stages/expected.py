"""Layer norm forward, one row per program, the whole row in one block."""

import torch
import triton
import triton.language as tl


@triton.jit
def layernorm_row(x_ptr, w_ptr, b_ptr, y_ptr, stride, N, eps, BLOCK: tl.constexpr, split_parts,
                  SPLIT_ROWS: tl.constexpr,
                  SPLIT_STAGE: tl.constexpr):
    # split-rows: SPLIT_ROWS programs per row, a chunk of the columns each; stage k reduces its chunk of
    # reduction loop k to partial values, later stages combine the row's partials
    part = tl.program_id(1)
    part_base = tl.program_id(0) * SPLIT_ROWS
    part_ids = part_base + tl.arange(0, SPLIT_ROWS)
    row = tl.program_id(0)
    # statistics in fp32
    # column-loop: the row is processed BLOCK columns at a time, in 3 passes
    row_sum_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    if SPLIT_STAGE == 0:
        chunk = tl.cdiv(tl.cdiv(N, SPLIT_ROWS), BLOCK) * BLOCK
        chunk_lo = part * chunk
        for col_start in range(chunk_lo, tl.minimum(chunk_lo + chunk, N), BLOCK):
            cols = col_start + tl.arange(0, BLOCK)
            mask = cols < N
            x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
            row_sum_acc += x
        tl.store(split_parts + (part_base + part) * 2 + 0, tl.sum(row_sum_acc, axis=0).to(tl.float64))
    else:
        row_sum_acc_parts = tl.load(split_parts + part_ids * 2 + 0).to(tl.float32)
        row_sum_acc_total = tl.sum(row_sum_acc_parts, axis=0)
        mean = row_sum_acc_total / N
        row_sum_acc_2 = tl.zeros((BLOCK,), dtype=tl.float32)
        if SPLIT_STAGE == 1:
            chunk_2 = tl.cdiv(tl.cdiv(N, SPLIT_ROWS), BLOCK) * BLOCK
            chunk_lo_2 = part * chunk_2
            for col_start in range(chunk_lo_2, tl.minimum(chunk_lo_2 + chunk_2, N), BLOCK):
                cols = col_start + tl.arange(0, BLOCK)
                mask = cols < N
                x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
                d = tl.where(mask, x - mean, 0.0)
                row_sum_acc_2 += d * d
            tl.store(split_parts + (part_base + part) * 2 + 1, tl.sum(row_sum_acc_2, axis=0).to(tl.float64))
        else:
            row_sum_acc_2_parts = tl.load(split_parts + part_ids * 2 + 1).to(tl.float32)
            row_sum_acc_2_total = tl.sum(row_sum_acc_2_parts, axis=0)
            rstd = 1.0 / tl.sqrt(row_sum_acc_2_total / N + eps)
            chunk_3 = tl.cdiv(tl.cdiv(N, SPLIT_ROWS), BLOCK) * BLOCK
            chunk_lo_3 = part * chunk_3
            for col_start in range(chunk_lo_3, tl.minimum(chunk_lo_3 + chunk_3, N), BLOCK):
                cols = col_start + tl.arange(0, BLOCK)
                mask = cols < N
                x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
                d = tl.where(mask, x - mean, 0.0)
                w = tl.load(w_ptr + cols, mask=mask)
                b = tl.load(b_ptr + cols, mask=mask)
                y = d * rstd * w + b
                tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def layernorm(x, weight, bias, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    BLOCK = min(triton.next_power_of_2(N), 2048)
    split_rows = 16
    split_parts = torch.empty(M * split_rows * 2, dtype=torch.float64, device=x.device)
    layernorm_row[(M, split_rows)](x, weight, bias, y, x.stride(0), N, eps, BLOCK=BLOCK, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=0, num_warps=8)
    layernorm_row[(M, split_rows)](x, weight, bias, y, x.stride(0), N, eps, BLOCK=BLOCK, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=1, num_warps=8)
    layernorm_row[(M, split_rows)](x, weight, bias, y, x.stride(0), N, eps, BLOCK=BLOCK, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=2, num_warps=8)
    return y

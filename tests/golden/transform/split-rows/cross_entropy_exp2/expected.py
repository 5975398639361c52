"""Cross-entropy loss per token, -log softmax(logits)[target], written the straightforward
way: one program per row, two passes over the vocabulary in blocks of 1024 (the maximum,
then the sum of exponentials), then the target's logit; fp32 arithmetic.
logits is (rows, vocab) bf16, targets (rows,) int64; the loss is (rows,) fp32."""

import torch
import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr,
                         split_parts,
                         SPLIT_ROWS: tl.constexpr,
                         SPLIT_STAGE: tl.constexpr):
    # split-rows: SPLIT_ROWS programs per row, a chunk of the columns each; stage k reduces its chunk of
    # reduction loop k to partial values, later stages combine the row's partials
    part = tl.program_id(1)
    part_base = tl.program_id(0) * SPLIT_ROWS
    part_ids = part_base + tl.arange(0, SPLIT_ROWS)
    row = tl.program_id(0)
    row_ptr = logits_ptr + row * row_stride
    mx = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)
    # online-softmax: the maximum is kept running in the loop over the row below
    row_max = tl.max(tl.full((1,), float("-inf"), dtype=tl.float32), axis=0)
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    if SPLIT_STAGE == 0:
        chunk = tl.cdiv(tl.cdiv(n_cols, SPLIT_ROWS), BLOCK_SIZE) * BLOCK_SIZE
        chunk_lo = part * chunk
        for start in range(chunk_lo, tl.minimum(chunk_lo + chunk, n_cols), BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            x = tl.load(row_ptr + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            row_max_new = tl.maximum(row_max, tl.max(x, axis=0))
            row_max_safe = tl.where(row_max_new == float("-inf"), 0.0, row_max_new)
            acc = acc * tl.exp2(row_max * 1.4426950408889634 - row_max_safe * 1.4426950408889634) + tl.exp2(x * 1.4426950408889634 - row_max_safe * 1.4426950408889634)
            row_max = row_max_new
        tl.store(split_parts + (part_base + part) * 2 + 0, tl.sum(acc, axis=0).to(tl.float64))
        tl.store(split_parts + (part_base + part) * 2 + 1, row_max.to(tl.float64))
    else:
        row_max_parts = tl.load(split_parts + part_ids * 2 + 1).to(tl.float32)
        row_max = tl.max(row_max_parts, axis=0)
        acc_parts = tl.load(split_parts + part_ids * 2 + 0).to(tl.float32)
        acc_total = tl.sum(acc_parts * tl.exp2(row_max_parts * 1.4426950408889634 - (tl.where(row_max == float("-inf"), 0.0, row_max)) * 1.4426950408889634), axis=0)
        lse = row_max + tl.log(acc_total)
        target = tl.load(targets_ptr + row)
        target_logit = tl.load(row_ptr + target).to(tl.float32)
        tl.store(loss_ptr + row, lse - target_logit)


def cross_entropy(logits, targets):
    n_rows, n_cols = logits.shape
    loss = torch.empty(n_rows, device=logits.device, dtype=torch.float32)
    split_rows = 8
    split_parts = torch.empty(n_rows * split_rows * 2, dtype=torch.float64, device=logits.device)
    cross_entropy_kernel[(n_rows, split_rows)](logits, targets, loss, n_cols, logits.stride(0), BLOCK_SIZE=1024, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=0)
    cross_entropy_kernel[(n_rows, 1)](logits, targets, loss, n_cols, logits.stride(0), BLOCK_SIZE=1024, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=1)
    return loss

"""Cross-entropy loss per token, -log softmax(logits)[target], written the straightforward
way: one program per row, two passes over the vocabulary in blocks of 1024 (the maximum,
then the sum of exponentials), then the target's logit; fp32 arithmetic.
logits is (rows, vocab) bf16, targets (rows,) int64; the loss is (rows,) fp32."""

import torch
import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row * row_stride
    mx = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)
    # online-softmax: the maximum is kept running in the loop over the row below
    row_max = tl.max(tl.full((1,), float("-inf"), dtype=tl.float32), axis=0)
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        row_max_new = tl.maximum(row_max, tl.max(x, axis=0))
        row_max_safe = tl.where(row_max_new == float("-inf"), 0.0, row_max_new)
        acc = acc * tl.exp(row_max - row_max_safe) + tl.exp(x - row_max_safe)
        row_max = row_max_new
    lse = row_max + tl.log(tl.sum(acc, axis=0))
    target = tl.load(targets_ptr + row)
    target_logit = tl.load(row_ptr + target).to(tl.float32)
    tl.store(loss_ptr + row, lse - target_logit)


def cross_entropy(logits, targets):
    n_rows, n_cols = logits.shape
    loss = torch.empty(n_rows, device=logits.device, dtype=torch.float32)
    cross_entropy_kernel[(n_rows,)](logits, targets, loss, n_cols, logits.stride(0), BLOCK_SIZE=1024)
    return loss

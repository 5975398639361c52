"""Softmax of the logits of a few sequences over a large vocabulary, as a decoding step
samples from it: one program per row, the row walked in blocks of 2048 twice (a running
maximum with the sum of exponentials rescaled as it grows, then the normalized output), fp32
throughout. logits and probs are (rows, vocab) fp32."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_decode_kernel(logits_ptr, probs_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr,
                          split_parts,
                          SPLIT_ROWS: tl.constexpr,
                          SPLIT_STAGE: tl.constexpr):
    # split-rows: SPLIT_ROWS programs per row, a chunk of the columns each; stage k reduces its chunk of
    # reduction loop k to partial values, later stages combine the row's partials
    part = tl.program_id(1)
    part_base = tl.program_id(0) * SPLIT_ROWS
    part_ids = part_base + tl.arange(0, SPLIT_ROWS)
    row = tl.program_id(0)
    x_row = logits_ptr + row * row_stride
    y_row = probs_ptr + row * row_stride
    m = tl.max(tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32), axis=0)
    s = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    if SPLIT_STAGE == 0:
        chunk = tl.cdiv(tl.cdiv(n_cols, SPLIT_ROWS), BLOCK_SIZE) * BLOCK_SIZE
        chunk_lo = part * chunk
        for start in range(chunk_lo, tl.minimum(chunk_lo + chunk, n_cols), BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
            m_new = tl.maximum(m, tl.max(x, axis=0))
            s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
            m = m_new
        tl.store(split_parts + (part_base + part) * 2 + 0, tl.sum(s, axis=0).to(tl.float64))
        tl.store(split_parts + (part_base + part) * 2 + 1, m.to(tl.float64))
    else:
        m_parts = tl.load(split_parts + part_ids * 2 + 1).to(tl.float32)
        m = tl.max(m_parts, axis=0)
        s_parts = tl.load(split_parts + part_ids * 2 + 0).to(tl.float32)
        s_total = tl.sum(s_parts * tl.exp(m_parts - m), axis=0)
        denom = s_total
        chunk_2 = tl.cdiv(tl.cdiv(n_cols, SPLIT_ROWS), BLOCK_SIZE) * BLOCK_SIZE
        chunk_lo_2 = part * chunk_2
        for start in range(chunk_lo_2, tl.minimum(chunk_lo_2 + chunk_2, n_cols), BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
            tl.store(y_row + cols, tl.exp(x - m) / denom, mask=cols < n_cols)


def softmax_decode(logits):
    n_rows, n_cols = logits.shape
    probs = torch.empty_like(logits)
    split_rows = 32
    split_parts = torch.empty(n_rows * split_rows * 2, dtype=torch.float64, device=logits.device)
    softmax_decode_kernel[(n_rows, split_rows)](logits, probs, n_cols, logits.stride(0), BLOCK_SIZE=2048, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=0, num_warps=8)
    softmax_decode_kernel[(n_rows, split_rows)](logits, probs, n_cols, logits.stride(0), BLOCK_SIZE=2048, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=1, num_warps=8)
    return probs

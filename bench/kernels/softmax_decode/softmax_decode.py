"""Softmax of the logits of a few sequences over a large vocabulary, as a decoding step
samples from it: one program per row, the row walked in blocks of 2048 twice (a running
maximum with the sum of exponentials rescaled as it grows, then the normalized output), fp32
throughout. logits and probs are (rows, vocab) fp32."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_decode_kernel(logits_ptr, probs_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = logits_ptr + row * row_stride
    y_row = probs_ptr + row * row_stride
    m = tl.max(tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32), axis=0)
    s = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    denom = tl.sum(s, axis=0)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
        tl.store(y_row + cols, tl.exp(x - m) / denom, mask=cols < n_cols)


def softmax_decode(logits):
    n_rows, n_cols = logits.shape
    probs = torch.empty_like(logits)
    softmax_decode_kernel[(n_rows,)](logits, probs, n_cols, logits.stride(0), BLOCK_SIZE=2048, num_warps=8)
    return probs

"""Causal attention with exp2 (the scale folded into log2(e)), a tl.range loop with its own
pipelining depth, and the causal comparison as the whole condition of an inline tl.where."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale,
                            stride_bh, stride_seq,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    base = bh * stride_bh
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :],
                mask=offs_m[:, None] < seq_len, other=0.0)
    qk_scale = sm_scale * 1.44269504  # exp(x) = exp2(x * log2(e))
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    # causal-split: key blocks below the first row (start_m * BLOCK_M) need no causal mask
    keys_end = tl.minimum((start_m + 1) * BLOCK_M, seq_len)
    unmasked_end = tl.minimum((start_m * BLOCK_M) // BLOCK_N * BLOCK_N, keys_end)
    for start_n in tl.range(0, unmasked_end, BLOCK_N, num_stages=2):
        offs_n = tl.arange(0, BLOCK_N) + start_n
        k = tl.load(k_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                    mask=offs_n[:, None] < seq_len, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                    mask=offs_n[:, None] < seq_len, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    for start_n in tl.range(unmasked_end, keys_end, BLOCK_N, num_stages=2):
        offs_n = tl.arange(0, BLOCK_N) + start_n
        k = tl.load(k_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                    mask=offs_n[:, None] < seq_len, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        qk = tl.where(offs_n[None, :] <= offs_m[:, None], qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                    mask=offs_n[:, None] < seq_len, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :], out.to(tl.float16),
             mask=offs_m[:, None] < seq_len)


def causal_attention(q, k, v):
    batch, heads, seq_len = q.shape[0], q.shape[1], q.shape[2]
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_len, 64), batch * heads)
    causal_attention_kernel[grid](q, k, v, out, seq_len, 1.0 / math.sqrt(q.shape[3]), q.stride(1), q.stride(2),
                                  HEAD_DIM=q.shape[3], BLOCK_M=64, BLOCK_N=32, num_warps=4)
    return out

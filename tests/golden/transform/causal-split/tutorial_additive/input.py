"""Causal attention as Triton's tutorial writes the mask: key offsets tl.arange(0, BLOCK_N)
outside the loop, start_n added in the comparison, the mask added to the scores
(qk + tl.where(mask, 0, -1.0e6)), and a tl.multiple_of hint on the loop variable."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale,
                            stride_bh, stride_seq,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = tl.arange(0, BLOCK_M) + BLOCK_M * pid_m
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    base = bh * stride_bh
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :],
                mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    hi = tl.minimum((pid_m + 1) * BLOCK_M, seq_len)
    for start_n in range(0, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        kt = tl.load(k_ptr + base + (start_n + offs_n[None, :]) * stride_seq + offs_d[:, None],
                     mask=(start_n + offs_n[None, :]) < seq_len, other=0.0)
        qk = tl.dot(q, kt)
        mask = offs_m[:, None] >= (start_n + offs_n[None, :])
        qk = qk * sm_scale + tl.where(mask, 0, -1.0e6)
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + (start_n + offs_n[:, None]) * stride_seq + offs_d[None, :],
                    mask=(start_n + offs_n[:, None]) < seq_len, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :], out.to(tl.float16),
             mask=offs_m[:, None] < seq_len)


def causal_attention(q, k, v):
    batch, heads, seq_len = q.shape[0], q.shape[1], q.shape[2]
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_len, 32), batch * heads)
    causal_attention_kernel[grid](q, k, v, out, seq_len, 1.0 / math.sqrt(q.shape[3]), q.stride(1), q.stride(2),
                                  HEAD_DIM=q.shape[3], BLOCK_M=32, BLOCK_N=16)
    return out

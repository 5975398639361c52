"""Attention forward that scales the scores in place after the dot (`s *= sm_scale`), pads
the keys past the end with -inf before that, and also writes each row's logsumexp: the
scores are built in three statements before the scale applies, and the running max is
stored (read back in base e)."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def attention_lse_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, seq_len, sm_scale,
                         stride_bh, stride_seq,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    base = bh * stride_bh
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :],
                mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start_n in range(0, seq_len, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                    mask=offs_n[:, None] < seq_len, other=0.0)
        s = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        s = tl.where(offs_n[None, :] < seq_len, s, float("-inf"))
        s += tl.dot(q, tl.trans(k))
        s *= sm_scale
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                    mask=offs_n[:, None] < seq_len, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :], out.to(tl.float16),
             mask=offs_m[:, None] < seq_len)
    tl.store(lse_ptr + bh * seq_len + offs_m, m_i + tl.log(l_i), mask=offs_m < seq_len)


def attention_lse(q, k, v):
    batch, heads, seq_len = q.shape[0], q.shape[1], q.shape[2]
    out = torch.empty_like(q)
    lse = torch.empty((batch, heads, seq_len), dtype=torch.float32, device=q.device)
    sm_scale = 1.0 / math.sqrt(q.shape[3])
    grid = (triton.cdiv(seq_len, 32), batch * heads)
    attention_lse_kernel[grid](q, k, v, out, lse, seq_len, sm_scale, q.stride(1), q.stride(2),
                               HEAD_DIM=q.shape[3], BLOCK_M=32, BLOCK_N=32)
    return out, lse

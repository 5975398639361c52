"""Causal attention with the mask under a constexpr flag, applied to a tile of zeros before the
dot is added to it (qk = tl.zeros(...); if IS_CAUSAL: qk = tl.where(mask, qk, -inf);
qk += tl.dot(q, k)), the key loop starting at a name bound to 0 and ending at the diagonal
only when causal."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale,
                            stride_bh, stride_seq,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            IS_CAUSAL: tl.constexpr = True):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    base = bh * stride_bh
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :],
                mask=offs_m[:, None] < seq_len, other=0.0)
    q = (q * sm_scale).to(tl.float16)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    lo = 0
    hi = tl.minimum((pid_m + 1) * BLOCK_M, seq_len) if IS_CAUSAL else seq_len
    # causal-split: key blocks below the first row (pid_m * BLOCK_M) need no causal mask
    unmasked_end = tl.minimum((pid_m * BLOCK_M) // BLOCK_N * BLOCK_N, hi)
    for start_n in range(lo, unmasked_end, BLOCK_N):
        kt = tl.load(k_ptr + base + (start_n + offs_n[None, :]) * stride_seq + offs_d[:, None],
                     mask=(start_n + offs_n[None, :]) < seq_len, other=0.0)
        v = tl.load(v_ptr + base + (start_n + offs_n[:, None]) * stride_seq + offs_d[None, :],
                    mask=(start_n + offs_n[:, None]) < seq_len, other=0.0)
        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        qk += tl.dot(q, kt)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        acc *= alpha[:, None]
        acc += tl.dot(p.to(tl.float16), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new
    for start_n in range(unmasked_end, hi, BLOCK_N):
        kt = tl.load(k_ptr + base + (start_n + offs_n[None, :]) * stride_seq + offs_d[:, None],
                     mask=(start_n + offs_n[None, :]) < seq_len, other=0.0)
        v = tl.load(v_ptr + base + (start_n + offs_n[:, None]) * stride_seq + offs_d[None, :],
                    mask=(start_n + offs_n[:, None]) < seq_len, other=0.0)
        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        if IS_CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
        qk += tl.dot(q, kt)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        acc *= alpha[:, None]
        acc += tl.dot(p.to(tl.float16), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :], out.to(tl.float16),
             mask=offs_m[:, None] < seq_len)


def causal_attention(q, k, v):
    batch, heads, seq_len = q.shape[0], q.shape[1], q.shape[2]
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_len, 32), batch * heads)
    causal_attention_kernel[grid](q, k, v, out, seq_len, 1.0 / math.sqrt(q.shape[3]), q.stride(1), q.stride(2),
                                  HEAD_DIM=q.shape[3], BLOCK_M=32, BLOCK_N=16, IS_CAUSAL=True)
    return out

"""Attention forward (no mask), softmax(Q K^T / sqrt(d)) V, written the straightforward way
after the flash-attention idea: one program per 32 query rows of one (batch, head), a loop
over the keys 32 at a time with a running max and sum (online softmax), fp32 accumulators.
q, k, v, out are (batch, heads, seq, head_dim) fp16, contiguous."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale,
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
        kt = tl.load(k_ptr + base + offs_n[None, :] * stride_seq + offs_d[:, None],
                     mask=offs_n[None, :] < seq_len, other=0.0)           # (HEAD_DIM, BLOCK_N)
        s = tl.dot(q, kt) * sm_scale
        s = tl.where(offs_n[None, :] < seq_len, s, float("-inf"))
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


def attention(q, k, v):
    batch, heads, seq_len = q.shape[0], q.shape[1], q.shape[2]
    out = torch.empty_like(q)
    sm_scale = 1.0 / math.sqrt(q.shape[3])
    grid = (triton.cdiv(seq_len, 32), batch * heads)
    attention_fwd_kernel[grid](q, k, v, out, seq_len, sm_scale, q.stride(1), q.stride(2),
                               HEAD_DIM=q.shape[3], BLOCK_M=32, BLOCK_N=32)
    return out

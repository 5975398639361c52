"""Causal attention forward with grouped-query attention (GQA), softmax(mask(Q K^T / sqrt(d))) V
where each group of Hq / Hkv query heads shares one key/value head, written the
straightforward way as attention_causal: one program per 32 query rows of one (batch, query
head), which reads key/value head h // (Hq / Hkv) of its batch; a loop over the keys up to the
last row of the block, 32 at a time, with the causal mask applied to every block, a running
max and sum (online softmax) and fp32 accumulators.
q, out are (batch, Hq, seq, head_dim) and k, v (batch, Hkv, seq, head_dim), fp16, contiguous."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def gqa_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale, q_heads, group_size,
                         stride_q_bh, stride_kv_bh, stride_seq,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)                                 # batch * q_heads + query head
    batch = bh // q_heads
    head = bh % q_heads
    kv_heads = q_heads // group_size
    kv_bh = batch * kv_heads + head // group_size         # the key/value head this query head reads
    q_base = bh * stride_q_bh
    kv_base = kv_bh * stride_kv_bh
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + q_base + offs_m[:, None] * stride_seq + offs_d[None, :],
                mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = tl.minimum((pid_m + 1) * BLOCK_M, seq_len)      # keys after the block's last row are masked anyway
    for start_n in range(0, end, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kt = tl.load(k_ptr + kv_base + offs_n[None, :] * stride_seq + offs_d[:, None],
                     mask=offs_n[None, :] < seq_len, other=0.0)
        s = tl.dot(q, kt) * sm_scale
        keep = (offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < seq_len)
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + kv_base + offs_n[:, None] * stride_seq + offs_d[None, :],
                    mask=offs_n[:, None] < seq_len, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + q_base + offs_m[:, None] * stride_seq + offs_d[None, :], out.to(tl.float16),
             mask=offs_m[:, None] < seq_len)


def gqa_attention(q, k, v):
    batch, q_heads, seq_len = q.shape[0], q.shape[1], q.shape[2]
    group_size = q_heads // k.shape[1]
    out = torch.empty_like(q)
    BLOCK_M = 32
    BLOCK_N = 32
    grid = (triton.cdiv(seq_len, BLOCK_M), batch * q_heads)
    gqa_attention_kernel[grid](q, k, v, out, seq_len, 1.0 / math.sqrt(q.shape[3]), q_heads, group_size,
                               q.stride(1), k.stride(1), q.stride(2),
                               HEAD_DIM=q.shape[3], BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out

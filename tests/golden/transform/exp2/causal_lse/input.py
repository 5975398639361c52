"""Causal attention that also returns the log-sum-exp of each row (what a backward pass
needs), scores divided by a temperature, masked with a large negative number."""

import torch
import triton
import triton.language as tl


@triton.jit
def causal_lse_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, seq_len, temperature,
                      stride_bh, stride_seq,
                      HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    base = bh * stride_bh
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :],
                mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.zeros((BLOCK_M,), dtype=tl.float32) - float("inf")
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start_n in range(0, (pid_m + 1) * BLOCK_M, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                    mask=offs_n[:, None] < seq_len, other=0.0)
        qk = tl.dot(q, tl.trans(k)) / temperature
        qk = tl.where((offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < seq_len), qk, -1.0e9)
        m_ij = tl.max(qk, 1)
        m_new = tl.maximum(m_i, m_ij)
        p = tl.exp(qk - m_new[:, None])
        corr = tl.exp(m_i - m_new)
        l_i = l_i * corr + tl.sum(p, 1)
        v = tl.load(v_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                    mask=offs_n[:, None] < seq_len, other=0.0)
        acc = acc * corr[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(lse_ptr + pid_m * 0 + bh * seq_len + offs_m, m_i + tl.log(l_i), mask=offs_m < seq_len)
    tl.store(o_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16),
             mask=offs_m[:, None] < seq_len)


def causal_lse(q, k, v, temperature):
    batch, heads, seq_len, head_dim = q.shape
    out = torch.empty_like(q)
    lse = torch.empty((batch, heads, seq_len), device=q.device, dtype=torch.float32)
    grid = (triton.cdiv(seq_len, 32), batch * heads)
    causal_lse_kernel[grid](q, k, v, out, lse, seq_len, temperature, q.stride(1), q.stride(2),
                            HEAD_DIM=head_dim, BLOCK_M=32, BLOCK_N=16)
    return out, lse

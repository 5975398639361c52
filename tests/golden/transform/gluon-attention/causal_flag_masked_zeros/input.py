"""Attention forward in the older FlashAttention-2 Triton style: Q scaled by the exp2 scale and
rounded before the loop, causality a constexpr flag (the mask applied to a tile of zeros the
scores are then added to, the loop's end chosen by the flag), K loaded [head, keys], no bounds
(the sequence a multiple of the tiles)."""

import torch
import triton
import triton.language as tl


@triton.jit
def fwd_kernel(Q, K, V, sm_scale, Out, stride_qh, stride_qm, stride_kh, stride_kn, stride_vh, stride_vn,
               stride_oh, stride_om, N_CTX, BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr,
               BLOCK_N: tl.constexpr, IS_CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_DMODEL)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = tl.load(Q + off_hz * stride_qh + offs_m[:, None] * stride_qm + offs_k[None, :])
    q = (q * qk_scale).to(K.dtype.element_ty)
    hi = (start_m + 1) * BLOCK_M if IS_CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        k = tl.load(K + off_hz * stride_kh + (start_n + offs_n)[None, :] * stride_kn + offs_k[:, None])
        v = tl.load(V + off_hz * stride_vh + (start_n + offs_n)[:, None] * stride_vn + offs_k[None, :])
        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        if IS_CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
        qk += tl.dot(q, k)
        m_i_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.math.exp2(m_i - m_i_new)
        p = tl.math.exp2(qk - m_i_new[:, None])
        acc *= alpha[:, None]
        acc += tl.dot(p.to(V.dtype.element_ty), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_i_new
    acc = acc / l_i[:, None]
    tl.store(Out + off_hz * stride_oh + offs_m[:, None] * stride_om + offs_k[None, :], acc.to(K.dtype.element_ty))


def attention(q, k, v, sm_scale, causal=True):
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(S, 64), B * H)
    fwd_kernel[grid](q, k, v, sm_scale, o, q.stride(1), q.stride(2), k.stride(1), k.stride(2), v.stride(1),
                     v.stride(2), o.stride(1), o.stride(2), S, BLOCK_M=64, BLOCK_DMODEL=D, BLOCK_N=64,
                     IS_CAUSAL=causal)
    return o

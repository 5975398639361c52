"""Attention forward with K, V and the output addressed through block pointers over the
flattened (batch * heads * sequence, head) arrays (no boundary checks: the sequence a multiple
of the tiles), Q through pointers with its head stride a parameter, causality a constexpr flag,
Q pre-scaled for exp2, and each row's base-2 log-sum-exp stored for a backward."""

import torch
import triton
import triton.language as tl


@triton.jit
def flash_fwd(Q, K, V, sm_scale, L, Out, stride_qh, stride_qm, stride_qk, stride_kn, stride_kk, stride_vn, stride_vk,
              stride_om, stride_on, N_CTX, TOTAL_ROWS, BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr,
              BLOCK_N: tl.constexpr, IS_CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    q_offset = off_hz * stride_qh
    row_offset = q_offset // stride_qm
    k_blocks = tl.make_block_ptr(base=K, shape=(BLOCK_DMODEL, TOTAL_ROWS), strides=(stride_kk, stride_kn),
                                 offsets=(0, row_offset), block_shape=(BLOCK_DMODEL, BLOCK_N), order=(0, 1))
    v_blocks = tl.make_block_ptr(base=V, shape=(TOTAL_ROWS, BLOCK_DMODEL), strides=(stride_vn, stride_vk),
                                 offsets=(row_offset, 0), block_shape=(BLOCK_N, BLOCK_DMODEL), order=(1, 0))
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    q = tl.load(Q + q_offset + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk)
    q = (q * (sm_scale * 1.44269504)).to(K.dtype.element_ty)
    hi = (start_m + 1) * BLOCK_M if IS_CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        k = tl.load(k_blocks)
        v = tl.load(v_blocks)
        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        if IS_CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
        qk += tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(qk - m_new[:, None])
        acc *= alpha[:, None]
        acc += tl.dot(p.to(V.dtype.element_ty), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new
        k_blocks = tl.advance(k_blocks, (0, BLOCK_N))
        v_blocks = tl.advance(v_blocks, (BLOCK_N, 0))
    acc = acc / l_i[:, None]
    tl.store(L + off_hz * N_CTX + offs_m, m_i + tl.math.log2(l_i))
    o_blocks = tl.make_block_ptr(base=Out, shape=(TOTAL_ROWS, BLOCK_DMODEL), strides=(stride_om, stride_on),
                                 offsets=(row_offset + start_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_DMODEL),
                                 order=(1, 0))
    tl.store(o_blocks, acc.to(K.dtype.element_ty))


def attention(q, k, v, sm_scale, causal=False):
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    lse = torch.empty(B * H, S, device=q.device, dtype=torch.float32)
    grid = (triton.cdiv(S, 64), B * H, 1)
    flash_fwd[grid](q, k, v, sm_scale, lse, o, q.stride(1), q.stride(2), q.stride(3), k.stride(2), k.stride(3),
                    v.stride(2), v.stride(3), o.stride(2), o.stride(3), S, B * H * S, BLOCK_M=64, BLOCK_DMODEL=D,
                    BLOCK_N=64, IS_CAUSAL=causal)
    return o, lse

# Refused: the block-pointer attention with boundary checks, but V loaded without zero padding
# (its lanes past the sequence are not defined, and P V would read them).
import torch
import triton
import triton.language as tl


@triton.jit
def checked_attention(Q, K, V, O, sm_scale, s_b, s_h, s_s, HEADS, SEQ, D: tl.constexpr, BM: tl.constexpr,
                      BN: tl.constexpr, CAUSAL: tl.constexpr):
    pid_m = tl.program_id(0)
    pair = tl.program_id(1)
    base = (pair // HEADS).to(tl.int64) * s_b + (pair % HEADS).to(tl.int64) * s_h
    q_bp = tl.make_block_ptr(base=Q + base, shape=(SEQ, D), strides=(s_s, 1), offsets=(pid_m * BM, 0),
                             block_shape=(BM, D), order=(1, 0))
    k_bp = tl.make_block_ptr(base=K + base, shape=(D, SEQ), strides=(1, s_s), offsets=(0, 0),
                             block_shape=(D, BN), order=(0, 1))
    v_bp = tl.make_block_ptr(base=V + base, shape=(SEQ, D), strides=(s_s, 1), offsets=(0, 0),
                             block_shape=(BN, D), order=(1, 0))
    o_bp = tl.make_block_ptr(base=O + base, shape=(SEQ, D), strides=(s_s, 1), offsets=(pid_m * BM, 0),
                             block_shape=(BM, D), order=(1, 0))
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    m_i = tl.full([BM], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    q = tl.load(q_bp, boundary_check=(0, 1), padding_option="zero")
    hi = tl.minimum((pid_m + 1) * BM, SEQ) if CAUSAL else SEQ
    for start in range(0, hi, BN):
        k = tl.load(k_bp, boundary_check=(0, 1), padding_option="zero")
        s = tl.dot(q, k) * sm_scale
        s = tl.where((start + offs_n)[None, :] < SEQ, s, float("-inf"))
        if CAUSAL:
            s = tl.where(offs_m[:, None] >= (start + offs_n)[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_bp, boundary_check=(0, 1))
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
        k_bp = tl.advance(k_bp, (0, BN))
        v_bp = tl.advance(v_bp, (BN, 0))
    tl.store(o_bp, (acc / l_i[:, None]).to(O.dtype.element_ty), boundary_check=(0, 1))


def attention(q, k, v, sm_scale, causal=False):
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(S, 64), B * H)
    checked_attention[grid](q, k, v, o, sm_scale, q.stride(0), q.stride(1), q.stride(2), H, S, D=D, BM=64, BN=64,
                            CAUSAL=causal)
    return o

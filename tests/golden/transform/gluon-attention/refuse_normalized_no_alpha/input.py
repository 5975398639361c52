# Refused: the normalized form with the accumulator rescaled by l / l_new but not by
# exp(m - m_new) (its earlier blocks keep their old maximum).
import torch
import triton
import triton.language as tl


@triton.jit
def normalized_attention(Q, K, V, O, sm_scale, s_b, s_h, s_s, HEADS, SEQ, D: tl.constexpr, BM: tl.constexpr,
                         BN: tl.constexpr, CAUSAL: tl.constexpr):
    pid_m = tl.program_id(0)
    pair = tl.program_id(1)
    base = (pair // HEADS) * s_b + (pair % HEADS) * s_h
    rows = pid_m * BM + tl.arange(0, BM)
    keys = tl.arange(0, BN)
    dims = tl.arange(0, D)
    q = tl.load(Q + base + rows[:, None] * s_s + dims[None, :])
    run_max = tl.zeros([BM], dtype=tl.float32) - float("inf")
    run_sum = tl.zeros([BM], dtype=tl.float32)
    out = tl.zeros([BM, D], dtype=tl.float32)
    end = (pid_m + 1) * BM if CAUSAL else SEQ
    for n0 in range(0, end, BN):
        cols = n0 + keys
        kt = tl.load(K + base + cols[None, :] * s_s + dims[:, None])
        s = tl.dot(q, kt) * sm_scale
        if CAUSAL:
            s = tl.where(rows[:, None] >= cols[None, :], s, float("-inf"))
        blk_max = tl.max(s, 1)
        num = tl.exp(s - blk_max[:, None])
        blk_sum = tl.sum(num, 1)
        new_max = tl.maximum(run_max, blk_max)
        alpha = tl.exp(run_max - new_max)
        beta = tl.exp(blk_max - new_max)
        new_sum = alpha * run_sum + beta * blk_sum
        p = num * (beta / new_sum)[:, None]
        out = out * (run_sum / new_sum)[:, None]
        v = tl.load(V + base + cols[:, None] * s_s + dims[None, :])
        out += tl.dot(p.to(v.dtype), v)
        run_sum = new_sum
        run_max = new_max
    tl.store(O + base + rows[:, None] * s_s + dims[None, :], out.to(O.dtype.element_ty))


def attention(q, k, v, sm_scale, causal=False):
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(S, 64), B * H)
    normalized_attention[grid](q, k, v, o, sm_scale, q.stride(0), q.stride(1), q.stride(2), H, S, D=D, BM=64, BN=64,
                               CAUSAL=causal)
    return o

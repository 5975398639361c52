# An attention forward taking tensor descriptors built on the host (TensorDescriptor arguments
# over Q, K, V and O seen as one [rows, head] matrix each); the key loop in a helper called per
# stage (MODE: bit 0 the keys before the diagonal block, or all of them when bit 1 is clear;
# bit 1 the diagonal block, masked); P and the output rounded to a dtype a constexpr flag picks.
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _stage(acc, l_run, m_run, q, k_desc, v_desc, row0, dtype: tl.constexpr, pid_m, scale2, offs_m, offs_n, SEQ,
           BM: tl.constexpr, BN: tl.constexpr, PHASE: tl.constexpr):
    if PHASE == 1:
        lo, hi = 0, pid_m * BM
    elif PHASE == 2:
        lo, hi = pid_m * BM, (pid_m + 1) * BM
        lo = tl.multiple_of(lo, BM)
    else:
        lo, hi = 0, SEQ
    row = row0 + lo
    for n0 in range(lo, hi, BN):
        n0 = tl.multiple_of(n0, BN)
        kt = k_desc.load([row, 0]).T
        s = tl.dot(q, kt)
        if PHASE == 2:
            keep = offs_m[:, None] >= (n0 + offs_n[None, :])
            s = s * scale2 + tl.where(keep, 0, -1.0e6)
            m_new = tl.maximum(m_run, tl.max(s, 1))
            s -= m_new[:, None]
        else:
            m_new = tl.maximum(m_run, tl.max(s, 1) * scale2)
            s = s * scale2 - m_new[:, None]
        p = tl.math.exp2(s)
        corr = tl.math.exp2(m_run - m_new)
        l_run = l_run * corr + tl.sum(p, 1)
        acc = acc * corr[:, None]
        vt = v_desc.load([row, 0])
        acc = tl.dot(p.to(dtype), vt, acc)
        m_run = m_new
        row += BN
    return acc, l_run, m_run


@triton.jit
def host_desc_attention(scale, LSE, Z, H, q_desc, k_desc, v_desc, o_desc, SEQ, D: tl.constexpr, BM: tl.constexpr,
                        BN: tl.constexpr, LOW: tl.constexpr, MODE: tl.constexpr):
    dtype = tl.float8e5 if LOW else tl.float16
    pid_m = tl.program_id(0)
    pair = tl.program_id(1)
    z = pair // H
    h = pair % H
    row0 = z * (SEQ * H) + h * SEQ
    q_row = row0 + pid_m * BM
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    m_run = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_run = tl.zeros([BM], dtype=tl.float32) + 1.0
    acc = tl.zeros([BM, D], dtype=tl.float32)
    scale2 = scale
    scale2 *= 1.44269504
    q = q_desc.load([q_row, 0])
    if MODE & 1:
        acc, l_run, m_run = _stage(acc, l_run, m_run, q, k_desc, v_desc, row0, dtype, pid_m, scale2, offs_m, offs_n,
                                   SEQ, BM, BN, 4 - MODE)
    if MODE & 2:
        acc, l_run, m_run = _stage(acc, l_run, m_run, q, k_desc, v_desc, row0, dtype, pid_m, scale2, offs_m, offs_n,
                                   SEQ, BM, BN, 2)
    m_run += tl.math.log2(l_run)
    acc = acc / l_run[:, None]
    tl.store(LSE + pair * SEQ + offs_m, m_run)
    o_desc.store([q_row, 0], acc.to(dtype))


def attention(q, k, v, causal, scale):
    """(output, base-2 log-sum-exp) of contiguous (Z, H, S, D) fp16 q, k, v."""
    Z, H, S, D = q.shape
    o = torch.empty_like(q)
    lse = torch.empty(Z, H, S, device=q.device, dtype=torch.float32)
    BM, BN = 128, 64

    def desc(t, rows):
        return TensorDescriptor(t, shape=[Z * H * S, D], strides=[D, 1], block_shape=[rows, D])

    grid = (triton.cdiv(S, BM), Z * H)
    host_desc_attention[grid](scale, lse, Z, H, desc(q, BM), desc(k, BN), desc(v, BN), desc(o, BM), S, D=D, BM=BM,
                              BN=BN, LOW=False, MODE=3 if causal else 1)
    return o, lse

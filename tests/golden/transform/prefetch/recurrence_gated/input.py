"""The recurrence with an optional per-step gate, as flash-linear-attention's gated kernels
write it: the gate's load and its pointer's move under a constexpr flag."""

import torch
import triton
import triton.language as tl


@triton.jit
def recurrent_fwd(q, k, v, g, o, T, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, scale,
                  USE_G: tl.constexpr):
    i_bh = tl.program_id(0)
    i_b, i_h = i_bh // H, i_bh % H
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, V)
    p_q = q + (i_b * T * H + i_h) * K + o_k
    p_k = k + (i_b * T * H + i_h) * K + o_k
    p_v = v + (i_b * T * H + i_h) * V + o_v
    p_o = o + (i_b * T * H + i_h) * V + o_v
    if USE_G:
        p_g = g + i_b * T * H + i_h
    b_h = tl.zeros([K, V], dtype=tl.float32)
    for _ in range(0, T):
        b_q = tl.load(p_q).to(tl.float32) * scale
        b_k = tl.load(p_k).to(tl.float32)
        b_v = tl.load(p_v).to(tl.float32)
        if USE_G:
            b_h = b_h * tl.exp(tl.load(p_g).to(tl.float32))
        else:
            b_h = b_h * 0.95
        b_h = b_h + b_k[:, None] * b_v[None, :]
        b_o = tl.sum(b_h * b_q[:, None], 0)
        tl.store(p_o, b_o.to(p_o.dtype.element_ty))
        p_q += H * K
        p_k += H * K
        p_v += H * V
        p_o += H * V
        if USE_G:
            p_g += H


def recurrent(q, k, v, g=None, scale=None):
    B, T, H, K = q.shape
    V = v.shape[-1]
    o = torch.empty_like(v)
    scale = K ** -0.5 if scale is None else scale
    recurrent_fwd[(B * H,)](q, k, v, g, o, T, H=H, K=K, V=V, scale=scale, USE_G=g is not None, num_warps=4)
    return o

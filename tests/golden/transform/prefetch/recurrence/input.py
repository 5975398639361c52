"""A linear-attention recurrence written as flash-linear-attention's fused_recurrent kernels
are: one program per (sequence, head), a state h of K x V carried over the time steps, the
step's q, k, v read through pointers that move by one step at the end of the body."""

import torch
import triton
import triton.language as tl


@triton.jit
def recurrent_fwd(q, k, v, o, T, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, scale):
    i_bh = tl.program_id(0)
    i_b, i_h = i_bh // H, i_bh % H
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, V)
    p_q = q + (i_b * T * H + i_h) * K + o_k
    p_k = k + (i_b * T * H + i_h) * K + o_k
    p_v = v + (i_b * T * H + i_h) * V + o_v
    p_o = o + (i_b * T * H + i_h) * V + o_v
    b_h = tl.zeros([K, V], dtype=tl.float32)
    for _ in range(0, T):
        b_q = tl.load(p_q).to(tl.float32) * scale
        b_k = tl.load(p_k).to(tl.float32)
        b_v = tl.load(p_v).to(tl.float32)
        b_h = b_h * 0.95 + b_k[:, None] * b_v[None, :]
        b_o = tl.sum(b_h * b_q[:, None], 0)
        tl.store(p_o, b_o.to(p_o.dtype.element_ty))
        p_q += H * K
        p_k += H * K
        p_v += H * V
        p_o += H * V


def recurrent(q, k, v, scale=None):
    B, T, H, K = q.shape
    V = v.shape[-1]
    o = torch.empty_like(v)
    scale = K ** -0.5 if scale is None else scale
    recurrent_fwd[(B * H,)](q, k, v, o, T, H=H, K=K, V=V, scale=scale, num_warps=4)
    return o

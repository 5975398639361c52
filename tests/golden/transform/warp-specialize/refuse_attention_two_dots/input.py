"""Causal attention forward over tensor descriptors: the blocks below the diagonal in one
loop, the diagonal block (masked) in a second; softmax online, in base 2."""

import torch
import triton
import triton.language as tl


def _tma_scratch(size, alignment, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, T, qk_scale,
                    HEAD: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh * T
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[T * 64, HEAD], strides=[HEAD, 1], block_shape=[BLOCK_M, HEAD])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[T * 64, HEAD], strides=[HEAD, 1], block_shape=[BLOCK_N, HEAD])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[T * 64, HEAD], strides=[HEAD, 1], block_shape=[BLOCK_N, HEAD])
    start = pid * BLOCK_M
    rows = start + tl.arange(0, BLOCK_M)
    q = q_desc.load([base + start, 0])
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD), tl.float32)
    for n0 in range(0, start, BLOCK_N):
        k = k_desc.load([base + n0, 0])
        s = tl.dot(q, tl.trans(k)) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([base + n0, 0])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    for n0 in range(start, start + BLOCK_M, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        k = k_desc.load([base + n0, 0])
        s = tl.dot(q, tl.trans(k)) * qk_scale
        s = tl.where(rows[:, None] >= cols[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([base + n0, 0])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    offs = (base + rows)[:, None] * HEAD + tl.arange(0, HEAD)[None, :]
    tl.store(o_ptr + offs, out.to(tl.float16))


def attention(q, k, v):
    BH, T, D = q.shape
    o = torch.empty_like(q)
    triton.set_allocator(_tma_scratch)
    grid = (triton.cdiv(T, 128), BH)
    attn_fwd_kernel[grid](q, k, v, o, T, D ** -0.5 * 1.4426950408889634,
                          HEAD=D, BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3)
    return o

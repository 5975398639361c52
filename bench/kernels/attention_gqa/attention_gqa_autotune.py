"""attention_gqa under @triton.autotune: the kernel as written, wrapped with the suite's
standard attention list (attention()), keyed on the sequence length and head size."""

import math

import torch
import triton


def make_launcher(mod, autotune, configs):
    kernel = autotune(configs=configs.attention(), key=["seq_len", "HEAD_DIM"])(mod.gqa_attention_kernel)

    def gqa_attention(q, k, v):
        batch, q_heads, seq_len = q.shape[0], q.shape[1], q.shape[2]
        group_size = q_heads // k.shape[1]
        out = torch.empty_like(q)
        grid = lambda META: (triton.cdiv(seq_len, META["BLOCK_M"]), batch * q_heads)
        kernel[grid](q, k, v, out, seq_len, 1.0 / math.sqrt(q.shape[3]), q_heads, group_size,
                     q.stride(1), k.stride(1), q.stride(2), HEAD_DIM=q.shape[3])
        return out

    return gqa_attention

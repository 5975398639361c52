"""attention under @triton.autotune: the kernel as written, wrapped with the suite's standard
attention list (attention()), keyed on the sequence length and head size."""

import math

import torch
import triton


def make_launcher(mod, autotune, configs):
    kernel = autotune(configs=configs.attention(), key=["seq_len", "HEAD_DIM"])(mod.attention_fwd_kernel)

    def attention(q, k, v):
        batch, heads, seq_len, head_dim = q.shape
        out = torch.empty_like(q)
        sm_scale = 1.0 / math.sqrt(head_dim)
        grid = lambda META: (triton.cdiv(seq_len, META["BLOCK_M"]), batch * heads)
        kernel[grid](q, k, v, out, seq_len, sm_scale, q.stride(1), q.stride(2), HEAD_DIM=head_dim)
        return out

    return attention

"""Liger's RoPE as a Hugging Face Llama attention layer calls it: LigerRopeFunction.apply(q, k,
cos, sin) with q (batch, heads, seq, head_dim) a transposed view of the projection's
(batch, seq, heads, head_dim) output, and cos/sin (1, seq, head_dim) (rotate-half layout:
the frequencies repeated twice). Returns the rotated (q, k), written in place."""

import torch

DEVICE = "cuda"
PEAK = None
SMALL_CASE = {"B": 2, "S": 9, "HQ": 4, "HK": 2, "D": 16}
THETA = 500000.0


def _cos_sin(S, D):
    inv = 1.0 / (THETA ** (torch.arange(0, D, 2, device=DEVICE, dtype=torch.float32) / D))
    freqs = torch.outer(torch.arange(S, device=DEVICE, dtype=torch.float32), inv)
    emb = torch.cat((freqs, freqs), dim=-1)[None]
    return emb.cos().to(torch.bfloat16), emb.sin().to(torch.bfloat16)


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    B, S, HQ, HK, D = case["B"], case["S"], case["HQ"], case["HK"], case["D"]
    q = torch.randn(B, S, HQ, D, device=DEVICE, generator=g).to(torch.bfloat16).transpose(1, 2)
    k = torch.randn(B, S, HK, D, device=DEVICE, generator=g).to(torch.bfloat16).transpose(1, 2)
    cos, sin = _cos_sin(S, D)
    return (q, k, cos, sin)


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def reference(q, k, cos, sin):
    c, s = cos[:, None], sin[:, None]
    return (q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s)


def flops(case):
    return 6 * case["B"] * case["S"] * (case["HQ"] + case["HK"]) * case["D"]


def bytes(case):
    return 2 * (2 * case["B"] * case["S"] * (case["HQ"] + case["HK"]) * case["D"] + 2 * case["S"] * case["D"])

"""LMDeploy's rotary embedding: apply_rotary_pos_emb(q, k, cos, sin) returns new rotated
(q, k), rotate-half style, with q (tokens, q heads, head_dim), k (tokens, kv heads, head_dim)
and cos, sin (tokens, head_dim) gathered by position."""

import torch

DEVICE = "cuda"
PEAK = None
SMALL_CASE = {"T": 21, "HQ": 6, "HK": 2, "D": 16}
THETA = 1000000.0


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, HQ, HK, D = case["T"], case["HQ"], case["HK"], case["D"]
    q = torch.randn(T, HQ, D, device=DEVICE, generator=g).to(torch.bfloat16)
    k = torch.randn(T, HK, D, device=DEVICE, generator=g).to(torch.bfloat16)
    pos = torch.arange(T, device=DEVICE) % max(1, (T + 1) // 2)   # two packed sequences
    inv = 1.0 / (THETA ** (torch.arange(0, D, 2, device=DEVICE, dtype=torch.float32) / D))
    freqs = pos[:, None].float() * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return (q, k, emb.cos().to(torch.bfloat16), emb.sin().to(torch.bfloat16))


def _rotate(x, cos, sin):
    h = x.shape[-1] // 2
    rot = torch.cat((-x[..., h:], x[..., :h]), dim=-1)
    return x * cos[:, None, :] + rot * sin[:, None, :]


def reference(q, k, cos, sin):
    return (_rotate(q, cos, sin), _rotate(k, cos, sin))


def flops(case):
    return 6 * case["T"] * (case["HQ"] + case["HK"]) * case["D"]


def bytes(case):
    return 2 * (2 * case["T"] * (case["HQ"] + case["HK"]) * case["D"] + 2 * case["T"] * case["D"])

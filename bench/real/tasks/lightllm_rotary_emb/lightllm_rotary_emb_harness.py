"""LightLLM's rotary embedding: rotary_emb_fwd(q, k, cos, sin) rotates q (tokens, q heads,
head_dim) and k (tokens, kv heads, head_dim) in place, pairing the first and second halves of
head_dim; cos and sin are (tokens, head_dim / 2), gathered by position from the cache."""

import torch

DEVICE = "cuda"
PEAK = None
SMALL_CASE = {"T": 21, "HQ": 6, "HK": 2, "D": 16}
THETA = 500000.0


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, HQ, HK, D = case["T"], case["HQ"], case["HK"], case["D"]
    q = torch.randn(T, HQ, D, device=DEVICE, generator=g).to(torch.bfloat16)
    k = torch.randn(T, HK, D, device=DEVICE, generator=g).to(torch.bfloat16)
    # Packed sequences: positions restart at every sequence boundary (4 sequences).
    pos = torch.arange(T, device=DEVICE) % max(1, (T + 3) // 4)
    inv = 1.0 / (THETA ** (torch.arange(0, D, 2, device=DEVICE, dtype=torch.float32) / D))
    freqs = pos[:, None].float() * inv[None, :]
    return (q, k, freqs.cos().to(torch.bfloat16), freqs.sin().to(torch.bfloat16))


def _rotate(x, cos, sin):
    h = x.shape[-1] // 2
    x0, x1 = x[..., :h], x[..., h:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1)


def reference(q, k, cos, sin):
    return (_rotate(q, cos, sin), _rotate(k, cos, sin))


def flops(case):
    return 6 * case["T"] * (case["HQ"] + case["HK"]) * case["D"]


def bytes(case):
    return 2 * (2 * case["T"] * (case["HQ"] + case["HK"]) * case["D"] + case["T"] * case["D"])

"""Liger's Qwen2-VL M-RoPE: LigerQwen2VLMRopeFunction.apply(q, k, cos, sin, mrope_section) with
q (batch, q heads, tokens, 128) and k (batch, kv heads, tokens, 128) bf16 transposed views of
token-major tensors, cos and sin (3, batch, tokens, 128) bf16 (time, height, width tables) and
mrope_section [16, 24, 24] -> q and k rotated in place (rotate_half, each channel's table chosen
by its section). One program per token for all heads."""

import torch

DEVICE = "cuda"
PEAK = None
SMALL_CASE = {"B": 2, "L": 5, "HQ": 3, "HK": 1}
D = 128
SECTION = [16, 24, 24]


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    B, L, HQ, HK = case["B"], case["L"], case["HQ"], case["HK"]
    q = torch.randn(B, L, HQ, D, device=DEVICE, generator=g).to(torch.bfloat16).transpose(1, 2)
    k = torch.randn(B, L, HK, D, device=DEVICE, generator=g).to(torch.bfloat16).transpose(1, 2)
    pos = torch.randint(0, L, (3, B, L), device=DEVICE, generator=g).float()
    inv = 1.0 / (1000000.0 ** (torch.arange(0, D, 2, device=DEVICE).float() / D))
    ang = pos[..., None] * inv
    ang = torch.cat([ang, ang], -1)                                        # (3, B, L, D)
    return (q, k, ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16), SECTION)


def _rotate(x, cos, sin, section):
    chunks = section * 2
    c = torch.cat([m[i % 3] for i, m in enumerate(cos.split(chunks, dim=-1))], -1)[:, None]
    s = torch.cat([m[i % 3] for i, m in enumerate(sin.split(chunks, dim=-1))], -1)[:, None]
    half = x.shape[-1] // 2
    rot = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * c + rot * s


def reference(q, k, cos, sin, section):
    return _rotate(q, cos, sin, section), _rotate(k, cos, sin, section)


def flops(case):
    return 3 * case["B"] * case["L"] * (case["HQ"] + case["HK"]) * D


def bytes(case):
    B, L = case["B"], case["L"]
    return 2 * 2 * B * L * (case["HQ"] + case["HK"]) * D + 2 * 2 * 3 * B * L * D

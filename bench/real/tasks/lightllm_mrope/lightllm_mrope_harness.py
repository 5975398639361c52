"""LightLLM's Qwen2-VL M-RoPE: mrope_triton(q, k, cos, sin, axis_map) with q (1, q heads, L, D)
and k (1, kv heads, L, D) bf16 (views of token-major (1, L, heads, D) tensors), cos and sin
(3, 1, L, D) bf16 (one table per position axis: time, height, width) and axis_map (D,) int32
naming the axis of each channel -> new (q_out, k_out) rotated with rotate_half."""

import torch

DEVICE = "cuda"
PEAK = None
SMALL_CASE = {"L": 9, "HQ": 3, "HK": 1, "D": 32}
# Frequency pairs per axis (time, height, width): Qwen2-VL's [16, 24, 24] for head_dim 128.
SECTIONS = {128: [16, 24, 24], 32: [4, 6, 6]}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    L, HQ, HK, D = case["L"], case["HQ"], case["HK"], case["D"]
    q = torch.randn(1, L, HQ, D, device=DEVICE, generator=g).to(torch.bfloat16).transpose(1, 2)
    k = torch.randn(1, L, HK, D, device=DEVICE, generator=g).to(torch.bfloat16).transpose(1, 2)
    # Position ids per axis: text runs share one position on all three, an image's tokens step
    # through height and width; random ones within the sequence's range stand for both.
    pos = torch.randint(0, L, (3, L), device=DEVICE, generator=g).float()
    inv = 1.0 / (1000000.0 ** (torch.arange(0, D, 2, device=DEVICE).float() / D))
    ang = pos[:, :, None] * inv[None, None, :]
    ang = torch.cat([ang, ang], -1)[:, None]                               # (3, 1, L, D)
    axis = []
    for i, n in enumerate(SECTIONS[D] * 2):
        axis += [i % 3] * n
    axis_map = torch.tensor(axis, dtype=torch.int32, device=DEVICE)
    return (q, k, ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16), axis_map)


def _rotate(x, cos, sin, axis_map):
    idx = axis_map.long()
    c = cos[idx, 0, :, torch.arange(cos.shape[-1], device=cos.device)].transpose(0, 1)   # (L, D)
    s = sin[idx, 0, :, torch.arange(sin.shape[-1], device=sin.device)].transpose(0, 1)
    half = x.shape[-1] // 2
    rot = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * c + rot * s


def reference(q, k, cos, sin, axis_map):
    return _rotate(q, cos, sin, axis_map), _rotate(k, cos, sin, axis_map)


def flops(case):
    return 3 * case["L"] * (case["HQ"] + case["HK"]) * case["D"]


def bytes(case):
    L, D = case["L"], case["D"]
    return 2 * 2 * L * (case["HQ"] + case["HK"]) * D + 2 * 2 * 3 * L * D + 4 * D

"""Liger's LayerNorm: LigerLayerNormFunction.apply(X, W, B, eps) on (tokens, hidden) bf16."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.layer_norm"
SMALL_CASE = {"T": 5, "H": 300}
EPS = 1e-5


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, H = case["T"], case["H"]
    x = (torch.randn(T, H, device=DEVICE, generator=g) * 2 + 0.5).to(torch.bfloat16)
    w = (torch.rand(H, device=DEVICE, generator=g) + 0.5).to(torch.bfloat16)
    b = (torch.randn(H, device=DEVICE, generator=g) * 0.1).to(torch.bfloat16)
    return (x, w, b, EPS)


def reference(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def vendor(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def flops(case):
    return 8 * case["T"] * case["H"]


def bytes(case):
    return 2 * (2 * case["T"] * case["H"] + 2 * case["H"])

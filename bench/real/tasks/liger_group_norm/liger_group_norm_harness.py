"""Liger's GroupNorm: LigerGroupNormFunction.apply(X, W, B, num_channels, num_groups, eps) with
X (batch, channels, H*W) fp32 and a per-channel affine, as a diffusion UNet uses it."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.group_norm"
SMALL_CASE = {"N": 2, "C": 8, "HW": 37, "G": 4}
EPS = 1e-6


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    N, C, HW = case["N"], case["C"], case["HW"]
    x = torch.randn(N, C, HW, device=DEVICE, generator=g) * 1.5 + 0.25
    w = torch.rand(C, device=DEVICE, generator=g) + 0.5
    b = torch.randn(C, device=DEVICE, generator=g) * 0.1
    return (x, w, b, C, case["G"], EPS)


def reference(x, w, b, num_channels, num_groups, eps):
    return torch.nn.functional.group_norm(x, num_groups, w, b, eps)


def vendor(x, w, b, num_channels, num_groups, eps):
    return torch.nn.functional.group_norm(x, num_groups, w, b, eps)


def flops(case):
    return 8 * case["N"] * case["C"] * case["HW"]


def bytes(case):
    return 4 * (2 * case["N"] * case["C"] * case["HW"] + 2 * case["C"])

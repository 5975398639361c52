"""Liger's DyT: LigerDyTFunction.apply(x, alpha, gamma, beta) = tanh(alpha * x) * gamma + beta
with x (tokens, hidden) bf16, alpha a 1-element tensor, gamma and beta (hidden,) bf16; a 2-D
grid (column blocks, rows) under @triton.autotune keyed on the row length."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "torch.tanh(alpha * x) * gamma + beta"
SMALL_CASE = {"T": 5, "H": 300}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, H = case["T"], case["H"]
    x = (torch.randn(T, H, device=DEVICE, generator=g) * 2.0).to(torch.bfloat16)
    alpha = torch.tensor([0.5], device=DEVICE).to(torch.bfloat16)
    gamma = (torch.rand(H, device=DEVICE, generator=g) + 0.5).to(torch.bfloat16)
    beta = (torch.randn(H, device=DEVICE, generator=g) * 0.1).to(torch.bfloat16)
    return (x, alpha, gamma, beta)


def reference(x, alpha, gamma, beta):
    return torch.tanh(alpha * x) * gamma + beta


def vendor(x, alpha, gamma, beta):
    return torch.tanh(alpha * x) * gamma + beta


def flops(case):
    return 4 * case["T"] * case["H"]


def bytes(case):
    return 2 * (2 * case["T"] * case["H"] + 2 * case["H"])

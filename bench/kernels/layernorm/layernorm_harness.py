"""Inputs, reference and roofline formulas for layernorm.

Shape: the layer norm of a 4096-wide model (GPT-NeoX / Falcon style, with bias) over 16384
tokens (8 x 2048): x (16384 x 4096) bf16. Memory-bound: bytes = read x, write y (the
weights are 16 KiB)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.layer_norm"
SMALL_CASE = {"M": 6, "N": 1000}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, N = case["M"], case["N"]
    x = (torch.randn(M, N, device=DEVICE, dtype=torch.float32, generator=g) * 2 + 0.5).to(torch.bfloat16)
    w = (torch.rand(N, device=DEVICE, dtype=torch.float32, generator=g) + 0.5).to(torch.bfloat16)
    b = (torch.randn(N, device=DEVICE, dtype=torch.float32, generator=g) * 0.1).to(torch.bfloat16)
    return (x, w, b)


def reference(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)


def vendor(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)


def flops(case):
    return 8 * case["M"] * case["N"]


def bytes(case):
    return 2 * (2 * case["M"] * case["N"] + 2 * case["N"])

"""Inputs, reference and roofline formulas for rmsnorm.

Shape: the RMS norm of Llama-3-70B (hidden 8192) over 8192 tokens: x (8192 x 8192) bf16.
Memory-bound: bytes = read x, write y (the weight is 16 KiB)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.rms_norm"
SMALL_CASE = {"M": 5, "N": 1200}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, N = case["M"], case["N"]
    x = torch.randn(M, N, device=DEVICE, dtype=torch.float32, generator=g).to(torch.bfloat16)
    w = (torch.rand(N, device=DEVICE, dtype=torch.float32, generator=g) + 0.5).to(torch.bfloat16)
    return (x, w)


def reference(x, w):
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * w


def vendor(x, w):
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, eps=1e-6)


def flops(case):
    return 4 * case["M"] * case["N"]


def bytes(case):
    return 2 * (2 * case["M"] * case["N"] + case["N"])

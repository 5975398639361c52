"""Inputs, reference and roofline formulas for matmul_bf16.

Shape: the MLP up (or gate) projection of Llama-3-8B (4096 -> 14336) over 4096 tokens:
(4096 x 4096) @ (4096 x 14336), bf16."""

import torch

DEVICE = "cuda"
PEAK = "bf16"
VENDOR = "cuBLAS (torch.matmul)"
SMALL_CASE = {"M": 64, "N": 160, "K": 96}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    a = torch.randn(case["M"], case["K"], device=DEVICE, dtype=torch.bfloat16, generator=g)
    b = torch.randn(case["K"], case["N"], device=DEVICE, dtype=torch.bfloat16, generator=g)
    return (a, b)


def reference(a, b):
    return a @ b


def vendor(a, b):
    return torch.matmul(a, b)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    return 2 * (case["M"] * case["K"] + case["K"] * case["N"] + case["M"] * case["N"])

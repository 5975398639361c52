"""Inputs, reference and roofline formulas for bmm_fp16.

Shape: a mixture-of-experts layer with its tokens grouped by expert (Mixtral-style, 8
experts, hidden 4096), 2048 tokens per expert, each expert's 4096 -> 2048 slice:
8 x (2048 x 4096) @ (4096 x 2048), fp16."""

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "cuBLAS (torch.bmm)"
SMALL_CASE = {"B": 3, "M": 48, "N": 80, "K": 64}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    a = torch.randn(case["B"], case["M"], case["K"], device=DEVICE, dtype=torch.float16, generator=g)
    b = torch.randn(case["B"], case["K"], case["N"], device=DEVICE, dtype=torch.float16, generator=g)
    return (a, b)


def reference(a, b):
    return torch.bmm(a, b)


def vendor(a, b):
    return torch.bmm(a, b)


def flops(case):
    return 2 * case["B"] * case["M"] * case["N"] * case["K"]


def bytes(case):
    return 2 * case["B"] * (case["M"] * case["K"] + case["K"] * case["N"] + case["M"] * case["N"])

"""Inputs, reference and roofline formulas for matmul_fp16.

Shape: the attention output projection of a 4096-wide model (Llama-2-7B) over a batch of
4 x 2048 tokens: (8192 x 4096) @ (4096 x 4096), fp16."""

import torch

DEVICE = "cuda"
PEAK = "fp16"                  # roofline: the vendor fp16 matmul rate on this GPU
VENDOR = "cuBLAS (torch.matmul)"
SMALL_CASE = {"M": 96, "N": 80, "K": 72}   # for CPU interpreter checks


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    a = torch.randn(case["M"], case["K"], device=DEVICE, dtype=torch.float16, generator=g)
    b = torch.randn(case["K"], case["N"], device=DEVICE, dtype=torch.float16, generator=g)
    return (a, b)


def reference(a, b):
    # Called on float64 copies: the exact product.
    return a @ b


def vendor(a, b):
    return torch.matmul(a, b)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    return 2 * (case["M"] * case["K"] + case["K"] * case["N"] + case["M"] * case["N"])

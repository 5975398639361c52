"""Inputs, reference and roofline formulas for matmul_tf32.

Shape: an fp32 (4096 x 4096) @ (4096 x 4096) product, as in fp32 training of a 4096-wide
layer over 4096 tokens; the vendor runs it on TF32 tensor cores (allow_tf32)."""

import torch

DEVICE = "cuda"
PEAK = "tf32"
VENDOR = "cuBLAS TF32 (torch.matmul, allow_tf32)"
SMALL_CASE = {"M": 80, "N": 96, "K": 72}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    a = torch.randn(case["M"], case["K"], device=DEVICE, dtype=torch.float32, generator=g)
    b = torch.randn(case["K"], case["N"], device=DEVICE, dtype=torch.float32, generator=g)
    return (a, b)


def reference(a, b):
    return a @ b


def vendor(a, b):
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        return torch.matmul(a, b)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    return 4 * (case["M"] * case["K"] + case["K"] * case["N"] + case["M"] * case["N"])

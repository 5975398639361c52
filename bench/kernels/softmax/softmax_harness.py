"""Inputs, reference and roofline formulas for softmax.

Shape: next-token probabilities over a 32000-word vocabulary (Llama-2) for 8192 positions:
(8192 x 32000) fp16 logits in, fp16 probabilities out. Logits ~N(0, 3^2). Memory-bound:
bytes = one read and one write of the matrix."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "torch.softmax"
SMALL_CASE = {"M": 5, "N": 2500}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    x = torch.randn(case["M"], case["N"], device=DEVICE, dtype=torch.float32, generator=g) * 3
    return (x.to(torch.float16),)


def reference(x):
    return torch.softmax(x, dim=-1)


def vendor(x):
    return torch.softmax(x, dim=-1)


def flops(case):
    return 5 * case["M"] * case["N"]


def bytes(case):
    return 2 * 2 * case["M"] * case["N"]

"""Inputs, reference and roofline formulas for softmax_decode.

Shape: one decoding step of 16 sequences over a 256000-word vocabulary (Gemma): (16 x 256000)
fp32 logits in, fp32 probabilities out. Logits ~N(0, 3^2). Memory-bound: bytes = one read
and one write of the matrix."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "torch.softmax"
SMALL_CASE = {"M": 3, "N": 5000}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    x = torch.randn(case["M"], case["N"], device=DEVICE, dtype=torch.float32, generator=g) * 3
    return (x,)


def reference(x):
    return torch.softmax(x, dim=-1)


def vendor(x):
    return torch.softmax(x, dim=-1)


def flops(case):
    return 5 * case["M"] * case["N"]


def bytes(case):
    return 2 * 4 * case["M"] * case["N"]

"""Inputs, reference and roofline formulas for argmax.

Shape: greedy next-token choice over Llama-3's vocabulary (128256) for 2048 positions (a
large decoding batch, or speculative verification): x (2048 x 128256) bf16 -> (2048,) int64.
bf16 logits tie often; the first index of the maximum counts, as in torch.argmax.
Memory-bound: bytes = one read of the logits."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "torch.argmax"
SMALL_CASE = {"M": 9, "V": 2000}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    x = (torch.randn(case["M"], case["V"], device=DEVICE, dtype=torch.float32, generator=g) * 2).to(torch.bfloat16)
    return (x,)


def reference(x):
    return torch.argmax(x, dim=-1)


def vendor(x):
    return torch.argmax(x, dim=-1)


def flops(case):
    return case["M"] * case["V"]


def bytes(case):
    return 2 * case["M"] * case["V"] + 8 * case["M"]

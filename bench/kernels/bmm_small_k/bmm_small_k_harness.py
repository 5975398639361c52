"""Inputs, reference and roofline formulas for bmm_small_k.

Shape: the attention scores of unfused (eager) attention, S = Q K^T per head, for one
sequence of 1024 tokens and 32 heads of 128 (Llama-2-7B's heads): 32 x (1024 x 128) @
(128 x 1024), fp16, with B holding K^T laid out (batch, K, N) as torch.bmm takes it. The
reduction is only 128 long, so each output tile does little work per byte it writes.
FLOPs 2 * B * M * N * K; bytes read A and B once and write C once."""

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "cuBLAS (torch.bmm)"
SMALL_CASE = {"B": 3, "M": 48, "N": 80, "K": 48}


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

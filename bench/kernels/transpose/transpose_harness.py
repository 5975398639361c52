"""Inputs, reference and roofline formulas for transpose.

Shape: the MLP activations of Llama-3-8B (ffn 14336) over 8192 tokens, transposed as for a
weight-gradient matmul: (8192 x 14336) bf16 -> (14336 x 8192). Memory-bound: bytes = one read
and one write."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "x.t().contiguous()"
SMALL_CASE = {"M": 70, "N": 45}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    x = torch.randn(case["M"], case["N"], device=DEVICE, dtype=torch.float32, generator=g).to(torch.bfloat16)
    return (x,)


def reference(x):
    return x.t().contiguous()


def vendor(x):
    return x.t().contiguous()


def flops(case):
    return 0


def bytes(case):
    return 2 * 2 * case["M"] * case["N"]

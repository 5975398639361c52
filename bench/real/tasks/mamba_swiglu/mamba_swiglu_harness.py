"""Mamba's SwiGLU: swiglu(xy) = SwiGLU.apply(xy) with xy (tokens, 2 I) bf16 split into x and y
halves -> silu(x) * y (tokens, I); a 2-D grid (rows, column blocks) under @triton.autotune over
the column block, keyed on the width."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.silu(x) * y"
SMALL_CASE = {"T": 5, "I": 300}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    return (torch.randn(case["T"], 2 * case["I"], device=DEVICE, generator=g).to(torch.bfloat16),)


def reference(xy):
    x, y = xy.chunk(2, dim=-1)
    return torch.nn.functional.silu(x) * y


def vendor(xy):
    x, y = xy.chunk(2, dim=-1)
    return torch.nn.functional.silu(x) * y


def flops(case):
    return 5 * case["T"] * case["I"]


def bytes(case):
    return 2 * 3 * case["T"] * case["I"]

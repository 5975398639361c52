"""Linghe's column-wise absolute maximum: triton_abs_max(x) returns max(|x|, axis 0) as fp32
(floored at 1e-30) for a contiguous (rows, columns) x."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "x.abs().amax(0).float()"
SMALL_CASE = {"M": 600, "N": 48}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    x = (torch.randn(case["M"], case["N"], device=DEVICE, generator=g) * 3).to(torch.bfloat16)
    return (x,)


def reference(x):
    return x.abs().amax(0).clamp_min(1e-30)


def vendor(x):
    return x.abs().amax(0).float()


def flops(case):
    return case["M"] * case["N"]


def bytes(case):
    return 2 * case["M"] * case["N"] + 4 * case["N"]

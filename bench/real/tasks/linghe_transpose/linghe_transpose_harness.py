"""Linghe's transpose: triton_transpose(x) returns x.t() contiguous for a 2-D x."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "x.t().contiguous()"
SMALL_CASE = {"M": 70, "N": 48, "DTYPE": "bf16"}
DTYPES = {"bf16": torch.bfloat16, "fp8": torch.float8_e4m3fn}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    x = torch.randn(case["M"], case["N"], device=DEVICE, generator=g).to(DTYPES[case["DTYPE"]])
    return (x,)


def reference(x):
    return x.t().contiguous()


def vendor(x):
    return x.t().contiguous()


def flops(case):
    return 0


def bytes(case):
    size = 1 if case["DTYPE"] == "fp8" else 2
    return 2 * size * case["M"] * case["N"]

"""Linghe's top-k: triton_topk_forward(x, k) returns the k largest values of each row
(descending, x's type) and their int64 indices."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "torch.topk"
SMALL_CASE = {"T": 9, "E": 32, "K": 4, "DTYPE": "bf16"}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, E = case["T"], case["E"]
    # A permutation of a grid of multiples of 1/8 (exact in bf16): distinct values, no ties.
    perm = torch.argsort(torch.rand(T, E, device=DEVICE, generator=g), dim=1).float()
    x = ((perm - E / 2) * 0.125).to(DTYPES[case["DTYPE"]])
    return (x, case["K"])


def reference(x, k):
    return torch.topk(x, k, dim=-1)


def vendor(x, k):
    return torch.topk(x, k, dim=-1)


def flops(case):
    return case["T"] * case["E"] * case["K"]


def bytes(case):
    size = 4 if case["DTYPE"] == "fp32" else 2
    return size * case["T"] * case["E"] + (size + 8) * case["T"] * case["K"]

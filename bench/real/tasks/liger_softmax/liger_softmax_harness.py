"""Liger's softmax: LigerSoftmaxFunction.apply(x) over the last dimension, bf16 logits."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "torch.softmax"
SMALL_CASE = {"T": 3, "V": 1000}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    x = (torch.randn(case["T"], case["V"], device=DEVICE, generator=g) * 3).to(torch.bfloat16)
    return (x,)


def reference(x):
    return torch.softmax(x, dim=-1)


def vendor(x):
    return torch.softmax(x, dim=-1)


def flops(case):
    return 4 * case["T"] * case["V"]


def bytes(case):
    return 2 * 2 * case["T"] * case["V"]

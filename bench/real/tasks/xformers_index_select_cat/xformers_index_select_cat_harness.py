"""xFormers' row gather: index_select_cat_fwd(output, source, index) writes source[index] into
output (index int64, fewer indices than rows, as the function requires)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "torch.index_select"
SMALL_CASE = {"R": 50, "C": 600, "I": 17}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    R, C, I = case["R"], case["C"], case["I"]
    source = torch.randn(R, C, device=DEVICE, generator=g).to(torch.bfloat16)
    index = torch.randperm(R, device=DEVICE, generator=g)[:I]
    output = torch.empty(I, C, device=DEVICE, dtype=torch.bfloat16)
    return (output, source, index)


def reference(output, source, index):
    return source.index_select(0, index)


def vendor(output, source, index):
    return torch.index_select(source, 0, index, out=output)


def flops(case):
    return 0


def bytes(case):
    return 2 * 2 * case["I"] * case["C"] + 8 * case["I"]

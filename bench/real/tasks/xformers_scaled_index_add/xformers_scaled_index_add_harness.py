"""xFormers' scaled index add: scaled_index_add_fwd(x, index, source, scaling, alpha) adds
alpha * scaling * source[i] into x[index[i]] in place, x (batch, tokens, width) and source
(kept, tokens, width) bf16, scaling (width,) bf16 (the layer scale), index the kept samples;
a 3-D grid with literal blocks (1 index, 1 row, 512 columns per program)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "x.index_add_(0, index, source * scaling, alpha=alpha)"
SMALL_CASE = {"B": 6, "N": 5, "C": 40, "KEEP": 4}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    B, N, C, K = case["B"], case["N"], case["C"], case["KEEP"]
    x = torch.randn(B, N, C, device=DEVICE, generator=g).to(torch.bfloat16)
    source = torch.randn(K, N, C, device=DEVICE, generator=g).to(torch.bfloat16)
    scaling = (torch.rand(C, device=DEVICE, generator=g) * 0.2).to(torch.bfloat16)
    index = torch.randperm(B, device=DEVICE, generator=g)[:K].sort().values
    return (x, index, source, scaling, B / K)


def reference(x, index, source, scaling, alpha):
    out = x.clone()
    out[index] += alpha * scaling * source
    return out


def vendor(x, index, source, scaling, alpha):
    x.index_add_(0, index, source * scaling, alpha=alpha)


def flops(case):
    return 3 * case["KEEP"] * case["N"] * case["C"]


def bytes(case):
    return 2 * 3 * case["KEEP"] * case["N"] * case["C"] + 8 * case["KEEP"]

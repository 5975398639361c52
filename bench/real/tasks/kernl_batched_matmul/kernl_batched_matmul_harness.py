"""kernl's batched matmul: batched_matmul(a, b) with a (batch, M, K) and b (batch, K, N)
contiguous fp16 -> (batch, M, N) fp16; a 2-D grid (tiles, batch) under @triton.autotune over
10 configs keyed on M, N, K."""

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "torch.bmm"
SMALL_CASE = {"BATCH": 2, "M": 40, "K": 32, "N": 48}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    B, M, K, N = case["BATCH"], case["M"], case["K"], case["N"]
    s = K ** -0.25
    a = (torch.randn(B, M, K, device=DEVICE, generator=g) * s).to(torch.float16)
    b = (torch.randn(B, K, N, device=DEVICE, generator=g) * s).to(torch.float16)
    return (a, b)


def reference(a, b):
    return a @ b


def vendor(a, b):
    return torch.bmm(a, b)


def flops(case):
    return 2 * case["BATCH"] * case["M"] * case["N"] * case["K"]


def bytes(case):
    B, M, K, N = case["BATCH"], case["M"], case["K"], case["N"]
    return 2 * B * (M * K + K * N + M * N)

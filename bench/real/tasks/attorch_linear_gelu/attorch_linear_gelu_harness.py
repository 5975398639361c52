"""attorch's linear layer with a fused activation: LinearAutoGrad.apply(x, weight, bias, 'gelu')
with x (tokens, in) fp16, weight (in, out) fp16 (attorch stores it transposed), bias (out,),
exact (erf) GELU."""

import math

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "F.gelu(torch.addmm(b, x, w))"
SMALL_CASE = {"M": 37, "K": 64, "N": 80}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, device=DEVICE, generator=g).to(torch.float16)
    w = (torch.randn(K, N, device=DEVICE, generator=g) / math.sqrt(K)).to(torch.float16)
    b = (torch.randn(N, device=DEVICE, generator=g) * 0.1).to(torch.float16)
    return (x, w, b, "gelu")


def reference(x, w, b, act):
    return torch.nn.functional.gelu(x @ w + b)


def vendor(x, w, b, act):
    return torch.nn.functional.gelu(torch.addmm(b, x, w))


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * (M * K + K * N + N + M * N)

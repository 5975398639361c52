"""Inputs, reference and roofline formulas for matmul_bias_gelu.

Shape: the first MLP layer of a GPT-style 4096-wide model (4096 -> 16384, bias, GELU) over
4096 tokens: gelu((4096 x 4096) @ (4096 x 16384) + bias), fp16. W is stored (K, N).
Inputs are scaled as a trained layer's are (x ~ N(0,1), w ~ N(0, 1/K)): pre-activations ~1."""

import math

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "cuBLAS + GELU (torch.addmm, F.gelu)"
SMALL_CASE = {"M": 96, "N": 48, "K": 80}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    x = torch.randn(M, K, device=DEVICE, dtype=torch.float16, generator=g)
    w = (torch.randn(K, N, device=DEVICE, dtype=torch.float32, generator=g) / math.sqrt(K)).to(torch.float16)
    bias = (torch.randn(N, device=DEVICE, dtype=torch.float32, generator=g) * 0.1).to(torch.float16)
    return (x, w, bias)


def reference(x, w, bias):
    return torch.nn.functional.gelu(x @ w + bias)


def vendor(x, w, bias):
    return torch.nn.functional.gelu(torch.addmm(bias, x, w))


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    return 2 * (case["M"] * case["K"] + case["K"] * case["N"] + case["N"] + case["M"] * case["N"])

"""Liger's GeGLU as its Gemma MLP calls it: LigerGELUMulFunction.apply(gate, up), bf16, with
the tanh approximation of GELU (Gemma's hidden_activation gelu_pytorch_tanh)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.gelu(gate, approximate='tanh') * up"
SMALL_CASE = {"T": 3, "I": 700}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, I = case["T"], case["I"]
    gate = (torch.randn(T, I, device=DEVICE, generator=g) * 2).to(torch.bfloat16)
    up = torch.randn(T, I, device=DEVICE, generator=g).to(torch.bfloat16)
    return (gate, up)


def reference(gate, up):
    return torch.nn.functional.gelu(gate, approximate="tanh") * up


def vendor(gate, up):
    return torch.nn.functional.gelu(gate, approximate="tanh") * up


def flops(case):
    return 10 * case["T"] * case["I"]


def bytes(case):
    return 2 * 3 * case["T"] * case["I"]

"""LightLLM's Gemma GeGLU: gelu_and_mul_fwd(input, output) with input (tokens, 2 I) = [gate | up]
bf16 writes output (tokens, I) = gelu_tanh(gate) * up, 128 x 128 tiles."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.gelu(gate, approximate='tanh') * up"
SMALL_CASE = {"T": 5, "I": 200}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, I = case["T"], case["I"]
    x = torch.randn(T, 2 * I, device=DEVICE, generator=g).to(torch.bfloat16)
    out = torch.empty(T, I, device=DEVICE, dtype=torch.bfloat16)
    return (x, out)


def reference(x, out):
    I = x.shape[-1] // 2
    return torch.nn.functional.gelu(x[:, :I], approximate="tanh") * x[:, I:]


def vendor(x, out):
    I = x.shape[-1] // 2
    out.copy_(torch.nn.functional.gelu(x[:, :I], approximate="tanh") * x[:, I:])
    return out


def flops(case):
    return 10 * case["T"] * case["I"]


def bytes(case):
    return 2 * 3 * case["T"] * case["I"]

"""LightLLM's SwiGLU: silu_and_mul_fwd(gate_up, out) with gate_up (tokens, 2 x intermediate),
the fused gate/up projection's bf16 output (gate first), into out (tokens, intermediate)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.silu(gate) * up"
SMALL_CASE = {"T": 130, "I": 200}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, I = case["T"], case["I"]
    gate_up = (torch.randn(T, 2 * I, device=DEVICE, generator=g) * 2).to(torch.bfloat16)
    out = torch.empty(T, I, device=DEVICE, dtype=torch.bfloat16)
    return (gate_up, out)


def reference(gate_up, out):
    I = gate_up.shape[-1] // 2
    return torch.nn.functional.silu(gate_up[:, :I]) * gate_up[:, I:]


def vendor(gate_up, out):
    I = gate_up.shape[-1] // 2
    return torch.mul(torch.nn.functional.silu(gate_up[:, :I]), gate_up[:, I:], out=out)


def flops(case):
    return 5 * case["T"] * case["I"]


def bytes(case):
    return 2 * 3 * case["T"] * case["I"]

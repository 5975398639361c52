"""LMDeploy's SiLU-and-mul: silu_and_mul(gate_up) with gate_up (tokens, 2 I) = [gate | up] bf16
-> silu(gate) * up (tokens, I) bf16; a 2-D grid (column blocks, a persistent stride over rows
sized from the device's SMs and warps per SM)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.silu(gate) * up"
SMALL_CASE = {"T": 5, "I": 300}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    return (torch.randn(case["T"], 2 * case["I"], device=DEVICE, generator=g).to(torch.bfloat16),)


def reference(gate_up):
    gate, up = gate_up.chunk(2, dim=-1)
    return torch.nn.functional.silu(gate) * up


def vendor(gate_up):
    gate, up = gate_up.chunk(2, dim=-1)
    return torch.nn.functional.silu(gate) * up


def flops(case):
    return 5 * case["T"] * case["I"]


def bytes(case):
    return 2 * 3 * case["T"] * case["I"]

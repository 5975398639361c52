"""Liger's SwiGLU as LigerSwiGLUMLP calls it: LigerSiLUMulFunction.apply(gate, up), both the
(tokens, intermediate) bf16 outputs of the gate and up projections."""

import torch
# Liger's forward tests isinstance(a, torch.distributed.tensor.DTensor); a training stack has
# imported that submodule long before, but a bare torch does not import it eagerly.
import torch.distributed.tensor  # noqa: F401

DEVICE = "cuda"
PEAK = None
VENDOR = "F.silu(gate) * up"
SMALL_CASE = {"T": 3, "I": 700}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, I = case["T"], case["I"]
    gate = (torch.randn(T, I, device=DEVICE, generator=g) * 2).to(torch.bfloat16)
    up = torch.randn(T, I, device=DEVICE, generator=g).to(torch.bfloat16)
    return (gate, up)


def reference(gate, up):
    return torch.nn.functional.silu(gate) * up


def vendor(gate, up):
    return torch.nn.functional.silu(gate) * up


def flops(case):
    return 5 * case["T"] * case["I"]


def bytes(case):
    return 2 * 3 * case["T"] * case["I"]

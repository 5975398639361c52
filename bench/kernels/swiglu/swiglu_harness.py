"""Inputs, reference and roofline formulas for swiglu.

Shape: the SwiGLU of Llama-3-8B's MLP (ffn 14336) over 8192 tokens: gate and up
(8192 x 14336) bf16 in, one (8192 x 14336) bf16 out. Memory-bound: bytes = two reads and one
write. The vendor is eager torch (two kernels: silu, then the product)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.silu(gate) * up (eager)"
SMALL_CASE = {"M": 7, "N": 300}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    shape = (case["M"], case["N"])
    gate = (torch.randn(*shape, device=DEVICE, dtype=torch.float32, generator=g) * 2).to(torch.bfloat16)
    up = torch.randn(*shape, device=DEVICE, dtype=torch.float32, generator=g).to(torch.bfloat16)
    return (gate, up)


def reference(gate, up):
    return torch.nn.functional.silu(gate) * up


def vendor(gate, up):
    return torch.nn.functional.silu(gate) * up


def flops(case):
    return 5 * case["M"] * case["N"]


def bytes(case):
    return 3 * 2 * case["M"] * case["N"]

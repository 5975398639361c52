"""The backward of Liger's SwiGLU as a training step runs it: LigerSiLUMulFunction.apply(gate,
up) on the (tokens, intermediate) bf16 outputs of the gate and up projections, then the
gradients of gate and up for a bf16 output gradient (tritonforge draws it from the seed).
The reference gradients come from autograd through `reference` in float64."""

import torch
# Liger's forward tests isinstance(a, torch.distributed.tensor.DTensor); a training stack has
# imported that submodule long before, but a bare torch does not import it eagerly.
import torch.distributed.tensor  # noqa: F401

DEVICE = "cuda"
PEAK = None
VENDOR = "autograd of F.silu(gate) * up"
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
    # sigmoid, silu, two products for d(up), five for d(gate), per element
    return 10 * case["T"] * case["I"]


def bytes(case):
    # reads the output gradient, gate and up; writes both gradients (bf16)
    return 2 * 5 * case["T"] * case["I"]

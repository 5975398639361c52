"""attorch's GLU: GLUAutoGrad.apply(input, dim, act_func) with input (tokens, 2 I) fp32, dim -1
and act_func 'silu' -> a * silu(b) where [a | b] = input; torch makes both halves contiguous,
then a 1-D element-wise kernel under @triton.autotune (keyed on the size) applies the gate."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "a * F.silu(b)"
SMALL_CASE = {"T": 5, "I": 300}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    return (torch.randn(case["T"], 2 * case["I"], device=DEVICE, generator=g), -1, "silu")


def reference(x, dim, act):
    a, b = x.chunk(2, dim=dim)
    return a * torch.nn.functional.silu(b)


def vendor(x, dim, act):
    a, b = x.chunk(2, dim=dim)
    return a * torch.nn.functional.silu(b)


def flops(case):
    return 5 * case["T"] * case["I"]


def bytes(case):
    # The kernel reads both halves and writes the output; torch's two contiguous copies read and
    # write the input once more.
    return 4 * (3 * case["T"] * case["I"] + 2 * 2 * case["T"] * case["I"])

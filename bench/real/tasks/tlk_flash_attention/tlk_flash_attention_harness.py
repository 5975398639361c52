"""triton-lang/kernels' FlashAttention forward: attention(q, k, v, causal, sm_scale) with q, k,
v (batch, heads, seq, head_dim) contiguous fp16, softmax scale 1/sqrt(head_dim)."""

import math

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "F.scaled_dot_product_attention"
SMALL_CASE = {"B": 1, "H": 2, "S": 128, "D": 16, "CAUSAL": True}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    shape = (case["B"], case["H"], case["S"], case["D"])
    q, k, v = (torch.randn(shape, device=DEVICE, generator=g).to(torch.float16) for _ in range(3))
    return (q, k, v, case["CAUSAL"], 1.0 / math.sqrt(case["D"]))


def reference(q, k, v, causal, sm_scale):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)


def vendor(q, k, v, causal, sm_scale):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)


def flops(case):
    f = 4 * case["B"] * case["H"] * case["S"] ** 2 * case["D"]
    return f // 2 if case["CAUSAL"] else f


def bytes(case):
    return 2 * 4 * case["B"] * case["H"] * case["S"] * case["D"]

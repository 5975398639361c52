"""kernl's attention forward: attention_forward(q, k, v, output, sm_scale, is_causal) with q, k,
v, output (batch, heads, seq, head_dim) fp16."""

import math

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "F.scaled_dot_product_attention"
SMALL_CASE = {"B": 1, "H": 2, "S": 40, "D": 16, "CAUSAL": True}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    shape = (case["B"], case["H"], case["S"], case["D"])
    q, k, v = (torch.randn(shape, device=DEVICE, generator=g).to(torch.float16) for _ in range(3))
    return (q, k, v, torch.empty_like(q), 1.0 / math.sqrt(case["D"]), case["CAUSAL"])


def reference(q, k, v, out, sm_scale, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)


def vendor(q, k, v, out, sm_scale, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)


def flops(case):
    f = 4 * case["B"] * case["H"] * case["S"] ** 2 * case["D"]
    return f // 2 if case["CAUSAL"] else f


def bytes(case):
    return 2 * 4 * case["B"] * case["H"] * case["S"] * case["D"]

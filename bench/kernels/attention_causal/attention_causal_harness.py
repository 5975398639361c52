"""Inputs, reference and roofline formulas for attention_causal.

Shape: causal prefill of Llama-2-7B-sized attention (32 heads of 128) over 4 sequences of
2048 tokens: q, k, v (4, 32, 2048, 128) fp16. FLOPs count the two matmuls over the unmasked
half (2 * B * H * S^2 * D). The vendor is torch's scaled_dot_product_attention(is_causal=True);
vendors() forces each of its GPU backends in turn, and the suite compares the fastest."""

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "torch SDPA (F.scaled_dot_product_attention, is_causal)"
SMALL_CASE = {"B": 1, "H": 2, "S": 72, "D": 64}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    shape = (case["B"], case["H"], case["S"], case["D"])
    return tuple(torch.randn(*shape, device=DEVICE, dtype=torch.float16, generator=g) for _ in range(3))


def reference(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def vendor(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def vendors():
    """{name: callable} of the vendor implementations to time, in order: each SDPA GPU backend
    this torch has, forced (bench/benchlib/vendors.py). Off the GPU (interpreter runs), the
    default call."""
    from benchlib.vendors import sdpa_backends
    return sdpa_backends(vendor, DEVICE, VENDOR)


def flops(case):
    return 2 * case["B"] * case["H"] * case["S"] * case["S"] * case["D"]


def bytes(case):
    return 2 * 4 * case["B"] * case["H"] * case["S"] * case["D"]

"""Inputs, reference and roofline formulas for attention_gqa.

Shape: causal prefill of Llama-3-8B attention (32 query heads of 128 sharing 8 key/value
heads: groups of 4) over 4 sequences of 2048 tokens: q (4, 32, 2048, 128), k and v
(4, 8, 2048, 128) fp16. FLOPs count the two matmuls over the unmasked half for every query
head (2 * B * Hq * S^2 * D); bytes read q, k, v once and write the output once. The reference
repeats each key/value head for its group (repeat_interleave) and runs causal attention in
float64. The vendor is torch's scaled_dot_product_attention(is_causal=True, enable_gqa=True)
(k and v repeated per group on a torch without enable_gqa); vendors() forces each of its GPU
backends in turn, and the suite compares the fastest."""

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "torch SDPA (F.scaled_dot_product_attention, is_causal, enable_gqa)"
SMALL_CASE = {"B": 1, "Hq": 6, "Hkv": 2, "S": 72, "D": 64}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    q = torch.randn(case["B"], case["Hq"], case["S"], case["D"], device=DEVICE, dtype=torch.float16, generator=g)
    k = torch.randn(case["B"], case["Hkv"], case["S"], case["D"], device=DEVICE, dtype=torch.float16, generator=g)
    v = torch.randn(case["B"], case["Hkv"], case["S"], case["D"], device=DEVICE, dtype=torch.float16, generator=g)
    return (q, k, v)


def _repeat_kv(q, k, v):
    group = q.shape[1] // k.shape[1]
    return k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)


def reference(q, k, v):
    k, v = _repeat_kv(q, k, v)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


_GQA_KEYWORD = []   # [True | False] once known: does this torch's SDPA take enable_gqa (torch >= 2.5)?


def _takes_enable_gqa():
    if not _GQA_KEYWORD:
        t = torch.zeros(1, 2, 1, 8)
        try:
            torch.nn.functional.scaled_dot_product_attention(t, t[:, :1], t[:, :1], enable_gqa=True)
            _GQA_KEYWORD.append(True)
        except TypeError:
            _GQA_KEYWORD.append(False)
    return _GQA_KEYWORD[0]


def vendor(q, k, v):
    if _takes_enable_gqa():
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    k, v = _repeat_kv(q, k, v)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def vendors():
    """{name: callable} of the vendor implementations to time, in order: each SDPA GPU backend
    this torch has, forced (bench/benchlib/vendors.py). Off the GPU (interpreter runs), the
    default call."""
    from benchlib.vendors import sdpa_backends
    return sdpa_backends(vendor, DEVICE, VENDOR)


def flops(case):
    return 2 * case["B"] * case["Hq"] * case["S"] * case["S"] * case["D"]


def bytes(case):
    return 2 * 2 * case["B"] * (case["Hq"] + case["Hkv"]) * case["S"] * case["D"]

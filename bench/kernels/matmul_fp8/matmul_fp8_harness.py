"""Inputs, reference and roofline formulas for matmul_fp8.

Shape: an LLM projection at fp8 (a 4096 -> 8192 layer over 8192 tokens):
(8192 x 4096) @ (8192 x 4096)^T, fp8 e4m3 with per-tensor scales, bf16 out. The weight B is
stored (N, K), as a linear layer stores it. Inputs are made in fp32 as a trained layer's are
(x ~ N(0,1), w ~ N(0, 1/K): outputs ~1) and quantized to e4m3 with a per-tensor scale of
amax / 448 (e4m3's largest finite value), as fp8 inference does.

The vendor is cuBLAS with fast accumulation: Triton 3.6 on sm_90 accumulates fp8 dots in the
tensor cores' reduced precision across all of K (max_num_imprecise_acc defaults to 2**30
there, no promotion to fp32), which is what use_fast_accum=True asks of cuBLAS; without it
cuBLAS promotes its partial sums to fp32 and does more work than the kernel it is compared
with."""

import math

import torch

DEVICE = "cuda"
PEAK = "fp8"
VENDOR = "cuBLAS fp8 (torch._scaled_mm, fast accumulation)"
SMALL_CASE = {"M": 80, "N": 144, "K": 160}
FP8_MAX = 448.0


def _quantize(x):
    scale = (x.abs().amax() / FP8_MAX).reshape(1)
    return (x / scale).to(torch.float8_e4m3fn), scale


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    a, scale_a = _quantize(torch.randn(M, K, device=DEVICE, dtype=torch.float32, generator=g))
    b, scale_b = _quantize(torch.randn(N, K, device=DEVICE, dtype=torch.float32, generator=g) / math.sqrt(K))
    return (a, b, scale_a, scale_b)


def reference(a, b, scale_a, scale_b):
    # The suite hands this float64 copies of the fp8 values (exact); as-is it upcasts itself.
    f64 = torch.float64
    return (a.to(f64) @ b.to(f64).t()) * (scale_a.to(f64) * scale_b.to(f64))


def vendor(a, b, scale_a, scale_b):
    # b.t() of the row-major (N, K) weight is the column-major (K, N) operand _scaled_mm wants.
    return torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16,
                            use_fast_accum=True)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    return case["M"] * case["K"] + case["N"] * case["K"] + 2 * case["M"] * case["N"]

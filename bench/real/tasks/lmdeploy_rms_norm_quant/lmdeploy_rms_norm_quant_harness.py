"""LMDeploy's fused residual add + RMSNorm + per-token quantization:
rms_norm_dynamic_quant(x, w, eps, residual, quant_dtype=fp8 e4m3) -> (y fp8 (tokens, hidden),
scale fp32 (tokens, 1), out_residual bf16) with out_residual = x + residual, n = RMSNorm(
out_residual) * w, scale = max|n| / 448 and y = n / scale. One program per row."""

import torch

DEVICE = "cuda"
PEAK = None
SMALL_CASE = {"T": 5, "H": 300}
EPS = 1e-5
FP8_MAX = 448.0


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, H = case["T"], case["H"]
    x = torch.randn(T, H, device=DEVICE, generator=g).to(torch.bfloat16)
    res = torch.randn(T, H, device=DEVICE, generator=g).to(torch.bfloat16)
    w = (torch.rand(H, device=DEVICE, generator=g) + 0.5).to(torch.bfloat16)
    return (x, w, EPS, res, torch.float8_e4m3fn)


def reference(x, w, eps, res, quant_dtype):
    s = x + res
    n = s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps) * w
    scale = n.abs().amax(-1, keepdim=True) / FP8_MAX
    return n / scale, scale, s


def flops(case):
    return 7 * case["T"] * case["H"]


def bytes(case):
    T, H = case["T"], case["H"]
    return 2 * 3 * T * H + T * H + 4 * T + 2 * H

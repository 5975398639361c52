"""LMDeploy's block-scaled fp8 GEMM: blocked_gemm_fp8(A, A_scale, B, B_scale, out_dtype) with
A (tokens, K) fp8 e4m3 and A_scale (tokens, K/128) fp32 (per-token groups of 128), B (K, N)
fp8 the transpose of a row-major (N, K) weight (how DeepSeek-V3 checkpoints store it) and
B_scale (K/128, N/128) fp32. C = dequant(A) @ dequant(B) in out_dtype."""

import math

import torch

DEVICE = "cuda"
PEAK = "fp8"
SMALL_CASE = {"M": 40, "K": 256, "N": 384}
G = 128
FP8_MAX = 448.0


def _quant_rows(x):
    """Per (row, 128-column group) scales: x ~ q * s with q in fp8."""
    M, K = x.shape
    xg = x.view(M, K // G, G)
    s = xg.abs().amax(-1).clamp_min(1e-12) / FP8_MAX
    q = (xg / s[..., None]).to(torch.float8_e4m3fn).view(M, K)
    return q, s


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    a, a_scale = _quant_rows(torch.randn(M, K, device=DEVICE, generator=g))
    w = torch.randn(N, K, device=DEVICE, generator=g) / math.sqrt(K)
    wb = w.view(N // G, G, K // G, G)
    w_scale = wb.abs().amax(dim=(1, 3)).clamp_min(1e-12) / FP8_MAX          # (N/128, K/128)
    wq = (wb / w_scale[:, None, :, None]).to(torch.float8_e4m3fn).view(N, K)
    return (a, a_scale, wq.t(), w_scale.t(), torch.bfloat16)


def reference(a, a_scale, b, b_scale, out_dtype):
    K = a.shape[1]
    a_deq = a.to(torch.float64) * a_scale.repeat_interleave(G, dim=1)[:, :K]
    s = b_scale.repeat_interleave(G, dim=0).repeat_interleave(G, dim=1)[:K, :b.shape[1]]
    return a_deq @ (b.to(torch.float64) * s)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    M, K, N = case["M"], case["K"], case["N"]
    return M * K + K * N + 4 * (M * K // G + (K // G) * (N // G)) + 2 * M * N

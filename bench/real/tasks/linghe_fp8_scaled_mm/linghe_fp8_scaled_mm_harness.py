"""Linghe's channel-wise fp8 GEMM: triton_scaled_mm(a, b, a_scale, b_scale, out_dtype) with a
(M, K) and b (N, K) fp8 e4m3 row-major, a_scale (M,) and b_scale (N,) fp32 -> (a * a_scale)
@ (b * b_scale).T in out_dtype; literal 128 x 256 x 128 tiles, no masks on M and N."""

import torch

DEVICE = "cuda"
PEAK = "fp8"
VENDOR = "torch._scaled_mm"
SMALL_CASE = {"M": 128, "K": 192, "N": 256}
FP8_MAX = 448.0


def _quant(x):
    s = x.abs().amax(-1).clamp_min(1e-12) / FP8_MAX
    return (x / s[:, None]).to(torch.float8_e4m3fn), s


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    a, a_s = _quant(torch.randn(M, K, device=DEVICE, generator=g))
    b, b_s = _quant(torch.randn(N, K, device=DEVICE, generator=g) / K ** 0.5)
    return (a, b, a_s, b_s, torch.bfloat16)


def reference(a, b, a_s, b_s, out_dtype):
    return (a.to(a_s.dtype) * a_s[:, None]) @ (b.to(b_s.dtype) * b_s[:, None]).T


def vendor(a, b, a_s, b_s, out_dtype):
    if not a.is_cuda:
        return ((a.float() * a_s[:, None]) @ (b.float() * b_s[:, None]).T).to(out_dtype)
    return torch._scaled_mm(a, b.T, scale_a=a_s[:, None], scale_b=b_s[None, :], out_dtype=out_dtype)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    M, K, N = case["M"], case["K"], case["N"]
    return M * K + N * K + 4 * (M + N) + 2 * M * N

"""LightLLM's W8A8 linear: matmul_quantize_int8(x, w_int8, w_scale) quantizes the fp16
activations per row to int8 (scale = max|row| / 127, truncation toward zero), then multiplies
by the int8 weight (K x N, column-major as LightLLM stores it) with int32 accumulation and
rescales by both scales into fp16."""

import torch

DEVICE = "cuda"
PEAK = "int8"
VENDOR = "torch._int_mm + scales"
SMALL_CASE = {"M": 33, "K": 64, "N": 48}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, device=DEVICE, generator=g).to(torch.float16)
    w = torch.randn(K, N, device=DEVICE, generator=g) * 0.02
    w_scale = w.abs().amax(0) / 127.0
    w_int8 = (w / w_scale).round().clamp(-127, 127).to(torch.int8)
    w_int8 = w_int8.t().contiguous().t()   # column-major, as LightLLM's quantize_int8 leaves it
    return (x, w_int8, w_scale.to(torch.float16))


def reference(x, w_int8, w_scale):
    s = x.abs().amax(1) / 127.0
    q = torch.trunc(x / s[:, None])
    return (q @ w_int8.to(q.dtype)) * s[:, None] * w_scale[None, :]


def vendor(x, w_int8, w_scale):
    s = x.abs().amax(1, keepdim=True).float() / 127.0
    q = torch.trunc(x.float() / s).to(torch.int8)
    acc = torch._int_mm(q, w_int8)
    return (acc.float() * s * w_scale.float()[None, :]).to(torch.float16)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * M * K + K * N + 2 * N + 2 * M * N

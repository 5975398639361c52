"""LightLLM's (DeepSeek-V3's) block fp8 weight dequantization: weight_dequant(x, s) with x
(M, N) fp8 e4m3 and s (M/128, N/128) fp32 -> x * s per 128 x 128 block, in bf16."""

import math

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "x.float() * s.repeat_interleave(128, 0).repeat_interleave(128, 1)"
SMALL_CASE = {"M": 200, "N": 136}
B = 128
FP8_MAX = 448.0


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, N = case["M"], case["N"]
    bm, bn = math.ceil(M / B), math.ceil(N / B)
    w = torch.randn(bm * B, bn * B, device=DEVICE, generator=g) * 0.02
    s = w.view(bm, B, bn, B).abs().amax(dim=(1, 3)) / FP8_MAX
    q = (w.view(bm, B, bn, B) / s[:, None, :, None]).view(bm * B, bn * B)[:M, :N]
    return (q.contiguous().to(torch.float8_e4m3fn), s.contiguous())


def _scales(x, s):
    return s.repeat_interleave(B, 0).repeat_interleave(B, 1)[:x.shape[0], :x.shape[1]]


def reference(x, s):
    return x.to(s.dtype) * _scales(x, s)


def vendor(x, s):
    return (x.float() * _scales(x, s)).to(torch.bfloat16)


def flops(case):
    return 0


def bytes(case):
    M, N = case["M"], case["N"]
    return M * N + 2 * M * N + 4 * math.ceil(M / B) * math.ceil(N / B)

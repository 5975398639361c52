"""Liger's RMSNorm as a Llama layer calls it: LigerRMSNormFunction.apply(X, W, eps), Llama
casting mode (the inverse RMS in fp32, x * rstd rounded to the input type, then times W).
X is (tokens, hidden) bf16, W (hidden,) bf16, eps 1e-5 (Llama-3's rms_norm_eps)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.rms_norm"
SMALL_CASE = {"T": 5, "H": 300}
EPS = 1e-5


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, H = case["T"], case["H"]
    x = torch.randn(T, H, device=DEVICE, generator=g).to(torch.bfloat16)
    w = (torch.rand(H, device=DEVICE, generator=g) + 0.5).to(torch.bfloat16)
    return (x, w, EPS)


def reference(x, w, eps):
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return x * rstd * w


def vendor(x, w, eps):
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, eps)


def flops(case):
    return 4 * case["T"] * case["H"]


def bytes(case):
    return 2 * (2 * case["T"] * case["H"] + case["H"])

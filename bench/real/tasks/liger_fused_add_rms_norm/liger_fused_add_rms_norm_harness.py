"""Liger's fused residual add + RMSNorm as a decoder layer calls it:
LigerFusedAddRMSNormFunction.apply(X, R, W, eps, offset, casting_mode) -> (Y, S) with
S = X + R (the new residual) and Y = RMSNorm(S) * W, Llama casting mode (the inverse RMS in
fp32, S * rstd rounded to bf16, then times W). bf16 (tokens, hidden), eps 1e-5."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.rms_norm(X + R)"
SMALL_CASE = {"T": 5, "H": 300}
EPS = 1e-5


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, H = case["T"], case["H"]
    x = torch.randn(T, H, device=DEVICE, generator=g).to(torch.bfloat16)
    r = torch.randn(T, H, device=DEVICE, generator=g).to(torch.bfloat16)
    w = (torch.rand(H, device=DEVICE, generator=g) + 0.5).to(torch.bfloat16)
    return (x, r, w, EPS, 0.0, "llama")


def reference(x, r, w, eps, offset, casting_mode):
    s = x + r
    return s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps) * (w + offset), s


def vendor(x, r, w, eps, offset, casting_mode):
    s = x + r
    return torch.nn.functional.rms_norm(s, (s.shape[-1],), w, eps), s


def flops(case):
    return 5 * case["T"] * case["H"]


def bytes(case):
    return 2 * (4 * case["T"] * case["H"] + case["H"])

"""Inputs, reference and roofline formulas for conv2d_direct.

Shape: a 3x3 convolution of the first level of Stable Diffusion's UNet at 512x512 (a 64x64
latent, 320 channels), batch 8: x (8, 64, 64, 320) NHWC, w (320, 3, 3, 320), stride 1,
padding 1, fp16. Weights scaled as initialised (std 1/sqrt(fan-in)), so outputs are ~N(0,1).
The vendor is cuDNN through F.conv2d on channels-last tensors (the same memory, no copy)."""

import math

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "cuDNN (F.conv2d, channels_last)"
SMALL_CASE = {"N": 2, "H": 6, "W": 5, "C": 40, "K": 24, "R": 3, "S": 3}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    N, H, W, C, K, R, S = (case[k] for k in ("N", "H", "W", "C", "K", "R", "S"))
    x = torch.randn(N, H, W, C, device=DEVICE, dtype=torch.float16, generator=g)
    w = (torch.randn(K, R, S, C, device=DEVICE, dtype=torch.float32, generator=g) / math.sqrt(R * S * C)).to(torch.float16)
    return (x, w)


def _conv(x, w):
    # NHWC / KRSC memory seen as NCHW / KCRS tensors in channels-last layout; padding 1.
    y = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2), stride=1, padding=1)
    return y.permute(0, 2, 3, 1)


def reference(x, w):
    return _conv(x, w)


def vendor(x, w):
    return _conv(x, w)


def flops(case):
    # stride 1, padding 1, 3x3: P = H, Q = W
    return 2 * case["N"] * case["H"] * case["W"] * case["K"] * case["C"] * case["R"] * case["S"]


def bytes(case):
    n, h, w = case["N"], case["H"], case["W"]
    return 2 * (n * h * w * case["C"] + case["K"] * case["R"] * case["S"] * case["C"] + n * h * w * case["K"])

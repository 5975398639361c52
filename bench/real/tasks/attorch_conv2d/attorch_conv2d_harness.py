"""attorch's 2-D convolution: Conv2dAutoGrad.apply(x, weight, bias, stride_h, stride_w, pad_h,
pad_w, groups) with x (batch, channels, height, width) fp16 (NCHW, as attorch's Conv2d takes
it) and a 3x3 kernel."""

import math

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "F.conv2d (cuDNN)"
SMALL_CASE = {"N": 2, "C": 5, "H": 9, "W": 7, "K": 6}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    N, C, H, W, K = case["N"], case["C"], case["H"], case["W"], case["K"]
    x = torch.randn(N, C, H, W, device=DEVICE, generator=g).to(torch.float16)
    w = (torch.randn(K, C, 3, 3, device=DEVICE, generator=g) / math.sqrt(9 * C)).to(torch.float16)
    b = (torch.randn(K, device=DEVICE, generator=g) * 0.1).to(torch.float16)
    return (x, w, b, 1, 1, 1, 1, 1)


def reference(x, w, b, sh, sw, ph, pw, groups):
    return torch.nn.functional.conv2d(x, w, b, stride=(sh, sw), padding=(ph, pw), groups=groups)


def vendor(x, w, b, sh, sw, ph, pw, groups):
    return torch.nn.functional.conv2d(x, w, b, stride=(sh, sw), padding=(ph, pw), groups=groups)


def flops(case):
    return 2 * case["N"] * case["K"] * case["H"] * case["W"] * case["C"] * 9


def bytes(case):
    N, C, H, W, K = case["N"], case["C"], case["H"], case["W"], case["K"]
    return 2 * (N * C * H * W + K * C * 9 + K + N * K * H * W)

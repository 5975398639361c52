"""Inputs, reference and roofline formulas for patch_embed.

Shape: ViT-B/16's patch embedding at 224x224: x (128, 3, 224, 224) NCHW images, w (768, 3, 16,
16), bias (768,), stride 16, no padding, fp16; 196 tokens of 768 channels per image. Weights
scaled as initialised (std 1/sqrt(fan-in)), so outputs are ~N(0,1). The vendor is cuDNN
through F.conv2d (stride 16, NCHW, as nn.Conv2d runs it in ViT), its output seen as tokens
(flatten(2).transpose(1, 2), a view: no copy)."""

import math

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "cuDNN (F.conv2d, stride 16)"
SMALL_CASE = {"B": 2, "C": 3, "H": 32, "W": 48, "D": 40, "P": 16}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    B, C, H, W, D, P = (case[k] for k in ("B", "C", "H", "W", "D", "P"))
    x = torch.randn(B, C, H, W, device=DEVICE, dtype=torch.float16, generator=g)
    fan_in = C * P * P
    w = (torch.randn(D, C, P, P, device=DEVICE, dtype=torch.float32, generator=g) / math.sqrt(fan_in)).to(torch.float16)
    bias = (torch.randn(D, device=DEVICE, dtype=torch.float32, generator=g) * 0.1).to(torch.float16)
    return (x, w, bias)


def _conv(x, w, bias):
    y = torch.nn.functional.conv2d(x, w, bias, stride=w.shape[2])
    return y.flatten(2).transpose(1, 2)


def reference(x, w, bias):
    return _conv(x, w, bias)


def vendor(x, w, bias):
    return _conv(x, w, bias)


def flops(case):
    tokens = case["B"] * (case["H"] // case["P"]) * (case["W"] // case["P"])
    return 2 * tokens * case["D"] * case["C"] * case["P"] * case["P"]


def bytes(case):
    tokens = case["B"] * (case["H"] // case["P"]) * (case["W"] // case["P"])
    return 2 * (case["B"] * case["C"] * case["H"] * case["W"] + case["D"] * case["C"] * case["P"] * case["P"]
                + case["D"] + tokens * case["D"])

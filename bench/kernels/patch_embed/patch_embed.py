"""ViT patch embedding (a convolution whose stride equals its filter size), NCHW images,
written the straightforward way as a direct convolution.

One program per tile of 32 patches (image, patch row, patch column flattened) by 32 embedding
channels. For every input channel c and every pixel (i, j) of a patch it loads that pixel of
each patch and the matching weight of each channel and adds their outer product to the tile:
multiply-adds on the CUDA cores, one pixel at a time, products in fp32. x is (B, C, H, W),
w is (D, C, P, P), bias (D,), y is (B, H/P * W/P, D) (the token sequence ViT feeds its
transformer), all fp16."""

import torch
import triton
import triton.language as tl


@triton.jit
def patch_embed_kernel(x_ptr, w_ptr, bias_ptr, y_ptr,
                       B, C, H, W, D, GH, GW,
                       PATCH: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)     # patches (b, gh, gw) flattened
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)     # embedding channels
    img = offs_m // (GH * GW)
    g = offs_m % (GH * GW)
    gh = g // GW
    gw = g % GW
    m_ok = offs_m < B * GH * GW
    n_ok = offs_n < D
    x_base = img * (C * H * W) + gh * PATCH * W + gw * PATCH   # the patch's top-left pixel, channel 0
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for c in range(C):
        for i in range(PATCH):
            for j in range(PATCH):
                a = tl.load(x_ptr + x_base + c * H * W + i * W + j, mask=m_ok, other=0.0)
                b = tl.load(w_ptr + offs_n * (C * PATCH * PATCH) + (c * PATCH + i) * PATCH + j,
                            mask=n_ok, other=0.0)
                acc += a.to(tl.float32)[:, None] * b.to(tl.float32)[None, :]
    bias = tl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)
    acc += bias[None, :]
    tl.store(y_ptr + offs_m[:, None] * D + offs_n[None, :], acc.to(tl.float16),
             mask=m_ok[:, None] & n_ok[None, :])


def patch_embed(x, w, bias):
    B, C, H, W = x.shape
    D, _, P, _ = w.shape
    GH, GW = H // P, W // P
    y = torch.empty((B, GH * GW, D), device=x.device, dtype=torch.float16)
    BLOCK_M = 32
    BLOCK_N = 32
    grid = (triton.cdiv(B * GH * GW, BLOCK_M), triton.cdiv(D, BLOCK_N))
    patch_embed_kernel[grid](x, w, bias, y, B, C, H, W, D, GH, GW,
                             PATCH=P, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return y

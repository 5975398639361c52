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
                       PATCH: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_C_I_J: tl.constexpr = 64):
    # persistent: about one program per SM; each loops over tiles, stepping by the grid size
    num_pid_m = tl.cdiv((B * GH) * GW, BLOCK_M)
    num_pid_n = tl.cdiv(D, BLOCK_N)
    for tile_id in range(tl.program_id(0), num_pid_m * num_pid_n, tl.num_programs(0)):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
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
        for c_i_j in range(0, C * PATCH * PATCH, BLOCK_C_I_J):
            c_i_j_offs = c_i_j + tl.arange(0, BLOCK_C_I_J)
            c = c_i_j_offs // (PATCH * PATCH)
            i = (c_i_j_offs // PATCH) % PATCH
            j = c_i_j_offs % PATCH
            a = tl.load((x_ptr + x_base)[:, None] + (c * H * W + i * W + j)[None, :],
                        mask=m_ok[:, None] & (c_i_j_offs[None, :] < (C * PATCH * PATCH)), other=0.0)
            b = tl.load((w_ptr + offs_n * (C * PATCH * PATCH))[None, :] + ((c * PATCH + i) * PATCH + j)[:, None],
                        mask=n_ok[None, :] & (c_i_j_offs[:, None] < (C * PATCH * PATCH)), other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")
        bias = tl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)
        acc += bias[None, :]
        tl.store(y_ptr + offs_m[:, None] * D + offs_n[None, :], acc.to(tl.float16),
                 mask=m_ok[:, None] & n_ok[None, :])


def patch_embed(x, w, bias):
    B, C, H, W = x.shape
    D, _, P, _ = w.shape
    GH, GW = H // P, W // P
    y = torch.empty((B, GH * GW, D), device=x.device, dtype=torch.float16)
    BLOCK_M = 128
    BLOCK_N = 256
    num_sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    grid = (min(num_sms, triton.cdiv(B * GH * GW, BLOCK_M) * triton.cdiv(D, BLOCK_N)),)
    patch_embed_kernel[grid](x, w, bias, y, B, C, H, W, D, GH, GW,
                             PATCH=P, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=3)
    return y

import torch
import triton
import triton.language as tl


@triton.jit
def patch_embed_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, NP, D, GH, GW,
                       sxb, sxc, sxh, sxw, swd, swc, swh, sww,
                       P: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Patches of strided NCHW images (any strides), stride = filter = P, plus a bias.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    img = offs_m // (GH * GW)
    gh = (offs_m // GW) % GH
    gw = offs_m % GW
    m_ok = offs_m < NP
    n_ok = offs_n < D
    x_base = img * sxb + gh * P * sxh + gw * P * sxw
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for c in range(0, 3):
        c_off = c * sxc
        for i in tl.range(P):
            row = x_base + c_off + i * sxh      # the patch row of each image: a tensor, read twice
            for j in range(P):
                k_w = c * swc + i * swh + j * sww
                a = tl.load(x_ptr + row + j * sxw, mask=m_ok & (row >= 0), other=0.0)
                w = tl.load(w_ptr + offs_n * swd + k_w, mask=n_ok, other=0.0)
                acc += a.to(tl.float32)[:, None] * w.to(tl.float32)[None, :]
    acc += tl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + offs_m[:, None] * D + offs_n[None, :], acc.to(tl.float16),
             mask=m_ok[:, None] & n_ok[None, :])


def patch_embed(x, w, bias):
    B, C, H, W = x.shape
    D, _, P, _ = w.shape
    GH, GW = H // P, W // P
    y = torch.empty((B, GH * GW, D), device=x.device, dtype=torch.float16)
    grid = (triton.cdiv(B * GH * GW, 32), triton.cdiv(D, 32))
    patch_embed_kernel[grid](x, w, bias, y, B * GH * GW, D, GH, GW, *x.stride(), *w.stride(),
                             P=P, BLOCK_M=32, BLOCK_N=32)
    return y

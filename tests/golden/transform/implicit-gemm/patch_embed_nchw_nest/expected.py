import torch
import triton
import triton.language as tl


@triton.jit
def patch_embed_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, NP, D, GH, GW,
                       sxb, sxc, sxh, sxw, swd, swc, swh, sww,
                       P: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_C_I_J: tl.constexpr = 32):
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
    c_i_j_steps = 3 * tl.maximum(P, 0) * tl.maximum(P, 0)
    for c_i_j in range(0, c_i_j_steps, BLOCK_C_I_J):
        c_i_j_offs = c_i_j + tl.arange(0, BLOCK_C_I_J)
        c = c_i_j_offs // (P * P)
        i = (c_i_j_offs // P) % P
        j = c_i_j_offs % P
        c_off = c * sxc
        row = c_off + i * sxh      # the offset of the patch row in the image
        k_w = c * swc + i * swh + j * sww
        a = tl.load((x_ptr + x_base)[:, None] + (row + j * sxw)[None, :],
                    mask=m_ok[:, None] & (c_i_j_offs[None, :] < c_i_j_steps), other=0.0)
        w = tl.load((w_ptr + offs_n * swd)[None, :] + k_w[:, None],
                    mask=n_ok[None, :] & (c_i_j_offs[:, None] < c_i_j_steps), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
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

"""conv2d_direct under @triton.autotune: the kernel as written, wrapped with the suite's
standard 2-D tile list (tiles_2d), keyed on the problem's sizes."""

import torch
import triton


def make_launcher(mod, autotune, configs):
    kernel = autotune(configs=configs.tiles_2d(), key=["N", "H", "W", "C", "K", "R", "S"])(mod.conv2d_direct_kernel)

    def conv2d_direct(x, w, stride=1, padding=1):
        N, H, W, C = x.shape
        K, R, S, _ = w.shape
        P = (H + 2 * padding - R) // stride + 1
        Q = (W + 2 * padding - S) // stride + 1
        y = torch.empty((N, P, Q, K), device=x.device, dtype=torch.float16)
        grid = lambda META: (triton.cdiv(N * P * Q, META["BLOCK_M"]), triton.cdiv(K, META["BLOCK_N"]))
        kernel[grid](x, w, y, N, H, W, C, K, P, Q, R, S, stride, stride, padding, padding)
        return y

    return conv2d_direct

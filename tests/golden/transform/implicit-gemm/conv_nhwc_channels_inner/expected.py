"""2-D convolution forward, NHWC, as a direct convolution, written the straightforward way.

One program per tile of 32 output pixels (n, p, q flattened) by 32 output channels. For every
filter tap (r, s) and every input channel c it loads one input value per pixel and one weight
per output channel and adds their outer product to the tile: the multiply-adds run on the
CUDA cores, one channel at a time. x is (N, H, W, C), w is (K, R, S, C), y is (N, P, Q, K),
all fp16; the products are taken in fp32."""

import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_direct_kernel(x_ptr, w_ptr, y_ptr,
                         N, H, W, C, K, P, Q, R, S,
                         stride_h, stride_w, pad_h, pad_w,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr = 32):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)     # output pixels (n, p, q) flattened
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)     # output channels
    n = offs_m // (P * Q)
    pq = offs_m % (P * Q)
    p = pq // Q
    q = pq % Q
    m_ok = offs_m < N * P * Q
    n_ok = offs_n < K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for r in range(R):
        for s in range(S):
            h = p * stride_h - pad_h + r
            w = q * stride_w - pad_w + s
            pix_ok = m_ok & (h >= 0) & (h < H) & (w >= 0) & (w < W)
            x_base = ((n * H + h) * W + w) * C
            w_base = offs_n * (R * S * C) + (r * S + s) * C
            for c in range(0, C, BLOCK_C):
                c_offs = c + tl.arange(0, BLOCK_C)
                a = tl.load((x_ptr + x_base)[:, None] + c_offs[None, :],
                            mask=pix_ok[:, None] & (c_offs[None, :] < C), other=0.0)
                b = tl.load((w_ptr + w_base)[None, :] + c_offs[:, None],
                            mask=n_ok[None, :] & (c_offs[:, None] < C), other=0.0)
                acc += tl.dot(a, b, input_precision="ieee")
    tl.store(y_ptr + offs_m[:, None] * K + offs_n[None, :], acc.to(tl.float16),
             mask=m_ok[:, None] & n_ok[None, :])


def conv2d_direct(x, w, stride=1, padding=1):
    N, H, W, C = x.shape
    K, R, S, _ = w.shape
    P = (H + 2 * padding - R) // stride + 1
    Q = (W + 2 * padding - S) // stride + 1
    y = torch.empty((N, P, Q, K), device=x.device, dtype=torch.float16)
    BLOCK_M = 32
    BLOCK_N = 32
    grid = (triton.cdiv(N * P * Q, BLOCK_M), triton.cdiv(K, BLOCK_N))
    conv2d_direct_kernel[grid](x, w, y, N, H, W, C, K, P, Q, R, S, stride, stride, padding, padding,
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return y

"""2-D convolution forward, NHWC, as an implicit GEMM, the filter size a compile-time constant.

The output (N, P, Q, K) is a GEMM of M = N*P*Q output pixels by K output channels over
R*S*C products: one program per 32x32 tile of it (32 pixels x 32 output channels), looping
over the filter taps (r, s) and, inside, over input channels 32 at a time. Padding is handled
by masking the loads. x is (N, H, W, C), w is (K, R, S, C), y is (N, P, Q, K), all fp16."""

import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_nhwc_kernel(x_ptr, w_ptr, y_ptr,
                       N, H, W, C, K, P, Q,
                       stride_h, stride_w, pad_h, pad_w,
                       R: tl.constexpr, S: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)     # output pixels (n, p, q) flattened
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)     # output channels
    offs_c = tl.arange(0, BLOCK_K)
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
            w_base = (r * S + s) * C
            for c0 in range(0, C, BLOCK_K):
                cs = c0 + offs_c
                a = tl.load(x_ptr + x_base[:, None] + cs[None, :],
                            mask=pix_ok[:, None] & (cs[None, :] < C), other=0.0)
                b = tl.load(w_ptr + offs_n[None, :] * (R * S * C) + w_base + cs[:, None],
                            mask=(cs[:, None] < C) & n_ok[None, :], other=0.0)
                acc += tl.dot(a, b)
    tl.store(y_ptr + offs_m[:, None] * K + offs_n[None, :], acc.to(tl.float16),
             mask=m_ok[:, None] & n_ok[None, :])


def conv2d_nhwc(x, w, stride=1, padding=1):
    N, H, W, C = x.shape
    K, R, S, _ = w.shape
    P = (H + 2 * padding - R) // stride + 1
    Q = (W + 2 * padding - S) // stride + 1
    y = torch.empty((N, P, Q, K), device=x.device, dtype=torch.float16)
    BLOCK_M = 32
    BLOCK_N = 32
    BLOCK_K = 32
    grid = (triton.cdiv(N * P * Q, BLOCK_M), triton.cdiv(K, BLOCK_N))
    conv2d_nhwc_kernel[grid](x, w, y, N, H, W, C, K, P, Q, stride, stride, padding, padding, R=R, S=S,
                             BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return y

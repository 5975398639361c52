"""int4-weight matrix multiply Y = X @ W (weight-only quantization, GPTQ/AWQ-style), written
the straightforward way: one program per 16x64 tile of Y, a 64-wide step along K; at every
step the packed weights are unpacked with shifts and masks, dequantized to fp16 with their
group's scale and fed to tl.dot, accumulated in fp32.
X is (M, K) fp16. W is K x N int4, symmetric with zero point 8 (w = (q - 8) * scale):
qweight is (K // 8, N) int32, eight consecutive k of one column packed into each int32, k's
4 bits at bit 4 * (k % 8); scales is (K // G, N) fp16, one scale per group of G consecutive k
(G = K // scales.shape[0], 128 here). Y is (M, N) fp16. K must be a multiple of G (and G of 8)."""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_int4w_kernel(x_ptr, qw_ptr, scales_ptr, y_ptr, M, N, K,
                        stride_xm, stride_xk, stride_qk, stride_qn, stride_sg, stride_sn, stride_ym, stride_yn,
                        GROUP_SIZE: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :] * stride_xk,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w_mask = (rk[:, None] < K) & (rn[None, :] < N)
        # Row k // 8 of qweight holds k; its 4 bits start at bit 4 * (k % 8).
        packed = tl.load(qw_ptr + (rk[:, None] // 8) * stride_qk + rn[None, :] * stride_qn,
                         mask=w_mask, other=0)
        q = (packed >> ((rk[:, None] % 8) * 4)) & 0xF
        scale = tl.load(scales_ptr + (rk[:, None] // GROUP_SIZE) * stride_sg + rn[None, :] * stride_sn,
                        mask=w_mask, other=0.0)
        w = (q - 8).to(tl.float16) * scale
        acc += tl.dot(x, w)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul_int4w(x, qweight, scales):
    M, K = x.shape
    N = qweight.shape[1]
    y = torch.empty((M, N), device=x.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 64))
    matmul_int4w_kernel[grid](x, qweight, scales, y, M, N, K,
                              x.stride(0), x.stride(1), qweight.stride(0), qweight.stride(1),
                              scales.stride(0), scales.stride(1), y.stride(0), y.stride(1),
                              GROUP_SIZE=K // scales.shape[0], BLOCK_M=16, BLOCK_N=64, BLOCK_K=64)
    return y

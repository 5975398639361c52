"""A W8A8-style GEMM: int8 operands, a scale per K block of A's rows and of B's columns applied
to each block's dot, a per-tensor scale in the epilogue; the K loop counts blocks and computes
its offsets from the block index (no pointer advanced)."""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, as_ptr, bs_ptr, scale, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_blocks = tl.cdiv(K, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(n_blocks):
        offs_k = kb * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0)
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0)
        a_s = tl.load(as_ptr + offs_m * n_blocks + kb, mask=offs_m < M, other=0.0)
        b_s = tl.load(bs_ptr + offs_n * n_blocks + kb, mask=offs_n < N, other=0.0)
        acc = acc + tl.dot(a, b).to(tl.float32) * a_s[:, None] * b_s[None, :]
    acc = acc * scale
    c = acc.to(tl.float16)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, c,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a, b, a_scales, b_scales, scale):
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 64))
    matmul_kernel[grid](a, b, c, a_scales, b_scales, scale, M, N, K,
                        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BLOCK_M=16, BLOCK_N=64, BLOCK_K=128)
    return c

"""Matrix multiply in the form of Triton's matmul tutorial: the K loop counts blocks, and the
masks compare a block range with what is left of K (`offs_k < K - k0 * BLOCK_K`)."""
import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in tl.range(0, tl.cdiv(K, BLOCK_K), 1):
        offs_k = tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k0 * BLOCK_K + offs_k[None, :]) * stride_ak,
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k0 * BLOCK_K), other=0.0)
        b_mask = offs_k[:, None] < K - k0 * BLOCK_K
        b = tl.load(b_ptr + (k0 * BLOCK_K + offs_k[:, None]) * stride_bk + offs_n[None, :] * stride_bn,
                    mask=b_mask & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    c = acc.to(tl.float16)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, c,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    return c

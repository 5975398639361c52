import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr = 32):
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BLOCK_N)
    offs_m = (pid // num_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = (pid % num_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    a_ptrs = a_ptr + offs_m * stride_am
    b_ptrs = b_ptr + offs_n * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        k_offs = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptrs[:, None] + tl.arange(0, BLOCK_K)[None, :] * stride_ak,
                    mask=(offs_m < M)[:, None] & (k_offs[None, :] < K), other=0.0)
        b = tl.load(b_ptrs[None, :] + tl.arange(0, BLOCK_K)[:, None] * stride_bk,
                    mask=(offs_n < N)[None, :] & (k_offs[:, None] < K), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32)
    return c

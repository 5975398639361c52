"""C = A @ B in fp16, written as a sum of outer products, the way one first writes a GEMM.

One program per 64x64 tile of C. For every k it loads a column of A's tile and a row of B's
and adds their outer product to the accumulator: the multiply-adds run on the CUDA cores, in
fp32, one k at a time. A is (M, K), B is (K, N), C is (M, N), all fp16."""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_outer_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr = 32):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        k_offs = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + k_offs[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (k_offs[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_n[None, :] * stride_bn + k_offs[:, None] * stride_bk,
                    mask=(offs_n[None, :] < N) & (k_offs[:, None] < K), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    BLOCK_M = 64
    BLOCK_N = 64
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    a_tf = a if a.stride(1) == 1 else a.movedim(1, -1).contiguous().movedim(-1, 1)  # relayout: dimension 1 innermost
    matmul_outer_kernel[grid](a_tf, b, c, M, N, K,
                              a_tf.stride(0), a_tf.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return c

"""int8 matrix multiply C = A @ B^T, written the straightforward way: one program per 64x64
tile of C, a 64-wide step along K, pointers recomputed every step, the int8 dot accumulated
in int32. A is (M, K) and B is (N, K), both int8 row-major (B is the weight as a linear layer
stores it: its rows are the outputs); C is (M, N) int32."""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_int8_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                       stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)
        # B^T's (k, n) element is B's (n, k): a BLOCK_K x BLOCK_N tile read from B's rows.
        b = tl.load(b_ptr + rn[None, :] * stride_bn + rk[:, None] * stride_bk,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)
        acc += tl.dot(a, b, out_dtype=tl.int32)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul_int8(a, b):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.int32)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    matmul_int8_kernel[grid](a, b, c, M, N, K,
                             a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                             BLOCK_M=64, BLOCK_N=64, BLOCK_K=64)
    return c

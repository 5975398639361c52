"""Batch-reduce GEMM: C = sum over g of A[g] @ B[g] (fp16 in, fp32 accumulate), one program
per output tile, an outer loop over the G products and an inner, pipelined loop over K."""

import torch
import triton
import triton.language as tl


@triton.jit
def brgemm_kernel(a_ptr, b_ptr, c_ptr, G, M, N, K,
                  stride_ag, stride_am, stride_ak, stride_bg, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    g_count = tl.maximum(G, 0)
    k0_count = tl.maximum(tl.cdiv(K, BLOCK_K), 0)
    tl.static_assert(BLOCK_K > 0)
    # flatten-loops: the loops over g, k0 as one loop (pipelined across the nest)
    for flat in tl.range(0, g_count * k0_count, num_stages=3):
        g = flat // k0_count
        # this product's operands
        a_ptrs = (a_ptr + g * stride_ag + rows[:, None] * stride_am + ks[None, :] * stride_ak
                  + (flat % k0_count).to(tl.int64) * (BLOCK_K * stride_ak))
        b_ptrs = (b_ptr + g * stride_bg + ks[:, None] * stride_bk + cols[None, :] * stride_bn
                  + (flat % k0_count).to(tl.int64) * (BLOCK_K * stride_bk))
        k0 = (flat % k0_count) * BLOCK_K
        k = k0 + ks
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(k[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def brgemm(a, b):
    G, M, K = a.shape
    _, _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    brgemm_kernel[grid](a, b, c, G, M, N, K, a.stride(0), a.stride(1), a.stride(2),
                        b.stride(0), b.stride(1), b.stride(2), c.stride(0), c.stride(1),
                        BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    return c

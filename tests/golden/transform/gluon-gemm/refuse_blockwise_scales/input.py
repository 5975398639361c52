import torch
import triton
import triton.language as tl


@triton.jit
def fp8_block_gemm_kernel(a_ptr, b_ptr, as_ptr, bs_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_k = tl.cdiv(K, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rn[None, :] * stride_bn + rk[:, None], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        # one scale per row of A and per 128 columns of B, for each step along K
        sa = tl.load(as_ptr + rm * n_k + k // BLOCK_K, mask=rm < M, other=0.0)
        sb = tl.load(bs_ptr + pid_n * n_k + k // BLOCK_K)
        acc += tl.dot(a, b) * sa[:, None] * sb
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def fp8_block_gemm(a, b, a_scale, b_scale):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
    fp8_block_gemm_kernel[grid](a, b, a_scale, b_scale, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                                BLOCK_M=128, BLOCK_N=128, BLOCK_K=128)
    return c

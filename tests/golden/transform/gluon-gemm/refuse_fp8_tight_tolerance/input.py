import torch
import triton
import triton.language as tl


@triton.jit
def fp8_gemm_kernel(a_ptr, b_ptr, c_ptr, s_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rn[None, :] * stride_bn + rk[:, None], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = acc + tl.dot(a, b, input_precision="ieee")
    acc = acc * tl.load(s_ptr)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def fp8_gemm(a, b, s):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
    fp8_gemm_kernel[grid](a, b, c, s, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=128, BLOCK_N=128, BLOCK_K=128)
    return c

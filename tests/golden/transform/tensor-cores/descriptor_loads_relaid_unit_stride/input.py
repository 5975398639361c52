"""fp32 matrix multiply C = A @ B, written the straightforward way: one program per 32x32
tile of C, a 32-wide step along K. tl.dot on fp32 inputs uses the TF32 tensor cores (Triton's
default), as torch does with allow_tf32. A is (M, K), B is (K, N); C is (M, N) fp32."""

import torch
import triton
import triton.language as tl


@triton.jit
def sgemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, b_stride1):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * lda + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * ldb + cols[None, :] * b_stride1, mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rows[:, None] * ldc + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    a = a.contiguous()
    b = b.contiguous()
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
    b_tf = (b.movedim(0, -1).contiguous().movedim(-1, 0)  # relayout: dimension 0 innermost
            if b.dim() == 2 and b.stride(1) == 1 and b.stride(0) != 1 else b)
    sgemm_kernel[grid](a, b_tf, c, M, N, K, a.stride(0), b_tf.stride(0), c.stride(0),
                       BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
                       b_stride1=1 if b_tf is b else b_tf.stride(1))
    return c

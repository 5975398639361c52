import torch
import triton
import triton.language as tl


@triton.jit
def matmul_outer_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr = 16):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in tl.range(0, K, BLOCK_K, num_stages=2):
        k_offs = k + tl.arange(0, BLOCK_K)
        acc = acc + tl.dot(tl.load((a_ptr + rm * stride_am)[:, None] + k_offs[None, :] * stride_ak,
                                   mask=(rm < M)[:, None] & (k_offs[None, :] < K), other=0.0),
                           tl.load((b_ptr + rn * stride_bn)[None, :] + k_offs[:, None] * stride_bk,
                                   mask=(rn < N)[None, :] & (k_offs[:, None] < K), other=0.0),
                           input_precision="ieee")
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    matmul_outer_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                              c.stride(0), c.stride(1), BLOCK_M=64, BLOCK_N=64)
    return c

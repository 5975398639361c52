"""bf16 matrix multiply C = A @ B, written the straightforward way: one program per 32x64
tile of C, a 32-wide step along K, pointers recomputed every step, 4 warps.
A is (M, K), B is (K, N), both row-major; C is (M, N) bf16."""

import torch
import triton
import triton.language as tl


def _tma_scratch(size, alignment, stream):
    # scratch memory for the tensor descriptors the kernel makes (TMA)
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def matmul_bf16_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                       stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
    # grouped-order: one program per output tile on a 1-D grid, walked in groups of GROUP_M
    # tile rows so that programs running together share tiles of the inputs in L2
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # tensor-cores: the dot's tiles come through TMA tensor descriptors
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1],
                                       block_shape=[BLOCK_K, BLOCK_N])
    for k0 in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k0])
        b = b_desc.load([k0, pid_n * BLOCK_N])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(tl.bfloat16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
    # TMA descriptors need contiguous rows, 16-byte aligned
    assert a.stride(1) == 1 and a.stride(0) * a.element_size() % 16 == 0 and a.data_ptr() % 16 == 0
    assert b.stride(1) == 1 and b.stride(0) * b.element_size() % 16 == 0 and b.data_ptr() % 16 == 0
    triton.set_allocator(_tma_scratch)
    grid = lambda META: (triton.cdiv(M, META['BLOCK_M']) * triton.cdiv(N, META['BLOCK_N']),)
    matmul_bf16_kernel[grid](a, b, c, M, N, K,
                             a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                             BLOCK_M=128, BLOCK_N=256, BLOCK_K=64,
                             GROUP_M=8, num_warps=8, num_stages=4)
    return c

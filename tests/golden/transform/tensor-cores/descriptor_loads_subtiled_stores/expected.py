"""fp16 matrix multiply, written the straightforward way: 32x32 output tiles, a 32-wide
k step, Triton's default warps and stages."""

import torch
import triton
import triton.language as tl


def _tma_scratch(size, alignment, stream):
    # scratch memory for the tensor descriptors the kernel makes (TMA)
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  B_K_MAJOR: tl.constexpr = False):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # tensor-cores: the dot's tiles and the output tile go through TMA tensor descriptors
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = (tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_bn, 1],
                                        block_shape=[BLOCK_N, BLOCK_K]) if B_K_MAJOR else
              tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1],
                                        block_shape=[BLOCK_K, BLOCK_N]))
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1],
                                       block_shape=[BLOCK_M, BLOCK_N // 2])
    for k0 in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k0])
        b = (b_desc.load([pid_n * BLOCK_N, k0]).T if B_K_MAJOR else b_desc.load([k0, pid_n * BLOCK_N]))
        acc += tl.dot(a, b)
    c = acc.to(tl.float16)
    tile_lo, tile_hi = tl.split(tl.permute(tl.reshape(c, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], tile_lo)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], tile_hi)


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    # TMA descriptors need contiguous rows, 16-byte aligned
    assert a.stride(1) == 1 and a.stride(0) * a.element_size() % 16 == 0 and a.data_ptr() % 16 == 0
    assert (b.stride(1) == 1 and b.stride(0) * b.element_size() % 16 == 0 or
            b.stride(0) == 1 and b.stride(1) * b.element_size() % 16 == 0) and b.data_ptr() % 16 == 0
    assert c.stride(1) == 1 and c.stride(0) * c.element_size() % 16 == 0 and c.data_ptr() % 16 == 0
    triton.set_allocator(_tma_scratch)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    matmul_kernel[grid](a, b, c, M, N, K,
                        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, B_K_MAJOR=b.stride(1) != 1)
    return c

"""fp32 matrix multiply C = A @ B, written the straightforward way: one program per 32x32
tile of C, a 32-wide step along K. tl.dot on fp32 inputs uses the TF32 tensor cores (Triton's
default), as torch does with allow_tf32. A is (M, K), B is (K, N); C is (M, N) fp32."""

import torch
import triton
import triton.language as tl


def _tma_scratch(size, alignment, stream):
    # scratch memory for the tensor descriptors the kernel makes (TMA)
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def sgemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, b_stride1,
                 B_K_MAJOR: tl.constexpr = False):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # tensor-cores: the dot's tiles come through TMA tensor descriptors
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[lda, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = (tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[b_stride1, 1],
                                        block_shape=[BLOCK_N, BLOCK_K]) if B_K_MAJOR else
              tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[ldb, 1],
                                        block_shape=[BLOCK_K, BLOCK_N]))
    for k0 in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k0])
        b = (b_desc.load([pid_n * BLOCK_N, k0]).T if B_K_MAJOR else b_desc.load([k0, pid_n * BLOCK_N]))
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
    # TMA descriptors need contiguous rows, 16-byte aligned
    assert a.stride(0) * a.element_size() % 16 == 0 and a.data_ptr() % 16 == 0
    assert ((1 if b_tf is b else b_tf.stride(1)) == 1 and b_tf.stride(0) * b_tf.element_size() % 16 == 0 or
            b_tf.stride(0) == 1 and (1 if b_tf is b else b_tf.stride(1)) * b_tf.element_size() % 16 == 0) and b_tf.data_ptr() % 16 == 0
    triton.set_allocator(_tma_scratch)
    sgemm_kernel[grid](a, b_tf, c, M, N, K, a.stride(0), b_tf.stride(0), c.stride(0),
                       BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
                       b_stride1=1 if b_tf is b else b_tf.stride(1),
                       B_K_MAJOR=(1 if b_tf is b else b_tf.stride(1)) != 1)
    return c

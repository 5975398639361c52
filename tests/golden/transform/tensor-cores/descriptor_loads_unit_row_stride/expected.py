"""y = x @ w^T where the kernel takes w (N, K) as contiguous along K: its B tile's rows (k)
are w's unit stride, so a descriptor must read the tile's transpose."""

import torch
import triton
import triton.language as tl


def _tma_scratch(size, alignment, stream):
    # scratch memory for the tensor descriptors the kernel makes (TMA)
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def linear_kernel(x_ptr, w_ptr, y_ptr, M, N, K, stride_xm, stride_wn, stride_ym,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # tensor-cores: the dot's tiles come through TMA tensor descriptors
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, K], strides=[stride_xm, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    w_desc = tl.make_tensor_descriptor(w_ptr, shape=[N, K], strides=[stride_wn, 1],
                                       block_shape=[BLOCK_N, BLOCK_K])
    for k0 in range(0, K, BLOCK_K):
        x = x_desc.load([pid_m * BLOCK_M, k0])
        w = w_desc.load([pid_n * BLOCK_N, k0]).T
        acc += tl.dot(x, w)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :], acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def linear(x, w):
    M, K = x.shape
    N = w.shape[0]
    assert x.stride(1) == 1 and w.stride(1) == 1
    y = torch.empty((M, N), device=x.device, dtype=torch.float16)
    # TMA descriptors need contiguous rows, 16-byte aligned
    assert x.stride(0) * x.element_size() % 16 == 0 and x.data_ptr() % 16 == 0
    assert w.stride(0) * w.element_size() % 16 == 0 and w.data_ptr() % 16 == 0
    triton.set_allocator(_tma_scratch)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 32))
    linear_kernel[grid](x, w, y, M, N, K, x.stride(0), w.stride(0), y.stride(0),
                        BLOCK_M=64, BLOCK_N=32, BLOCK_K=32)
    return y

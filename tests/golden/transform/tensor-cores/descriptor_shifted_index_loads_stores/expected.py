"""fp16 linear layer with bias and GELU, fused: Y = gelu(X @ W + bias), written the
straightforward way: one program per 64x32 tile of Y, a 32-wide step along K, the bias and
the exact (erf) GELU applied in fp32 before the fp16 store.
X is (M, K), W is (K, N), bias is (N,); Y is (M, N) fp16."""

import torch
import triton
import triton.language as tl


def _tma_scratch(size, alignment, stream):
    # scratch memory for the tensor descriptors the kernel makes (TMA)
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def linear_gelu_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, M, N, K,
                       stride_xm, stride_xk, stride_wk, stride_wn, stride_ym, stride_yn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       W_K_MAJOR: tl.constexpr = False):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # tensor-cores: the dot's tiles and the output tile go through TMA tensor descriptors
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, K], strides=[stride_xm, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    w_desc = (tl.make_tensor_descriptor(w_ptr, shape=[N, K], strides=[stride_wn, 1],
                                        block_shape=[BLOCK_N, BLOCK_K]) if W_K_MAJOR else
              tl.make_tensor_descriptor(w_ptr, shape=[K, N], strides=[stride_wk, 1],
                                        block_shape=[BLOCK_K, BLOCK_N]))
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[stride_ym, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    for k in range(0, K, BLOCK_K):
        x = x_desc.load([pid_m * BLOCK_M, k])
        w = (w_desc.load([pid_n * BLOCK_N, k]).T if W_K_MAJOR else w_desc.load([k, pid_n * BLOCK_N]))
        acc += tl.dot(x, w)
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    z = acc + bias[None, :]
    y = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))
    y_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], y.to(tl.float16))


def linear_gelu(x, w, bias):
    M, K = x.shape
    N = w.shape[1]
    y = torch.empty((M, N), device=x.device, dtype=torch.float16)
    BLOCK_M = 64
    BLOCK_N = 32
    BLOCK_K = 32
    # TMA descriptors need contiguous rows, 16-byte aligned
    assert x.stride(1) == 1 and x.stride(0) * x.element_size() % 16 == 0 and x.data_ptr() % 16 == 0
    assert (w.stride(1) == 1 and w.stride(0) * w.element_size() % 16 == 0 or
            w.stride(0) == 1 and w.stride(1) * w.element_size() % 16 == 0) and w.data_ptr() % 16 == 0
    assert y.stride(1) == 1 and y.stride(0) * y.element_size() % 16 == 0 and y.data_ptr() % 16 == 0
    triton.set_allocator(_tma_scratch)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    linear_gelu_kernel[grid](x, w, bias, y, M, N, K,
                             x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
                             BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                             W_K_MAJOR=w.stride(1) != 1, num_warps=4)
    return y

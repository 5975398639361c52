"""Fixture no-tensor-cores: an fp32 matmul with input_precision="ieee": tl.dot becomes FMA loops."""

import torch
import triton
import triton.language as tl

KERNEL_NAME = "fp32_ieee_dot_kernel"


@triton.jit
def fp32_ieee_dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def prepare():
    m = n = k = 2048
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    c = torch.empty(m, n, device="cuda")
    return lambda: fp32_ieee_dot_kernel[(m // 64, n // 64)](a, b, c, m, n, k, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                                                            num_warps=4, num_stages=2)

"""A batched product with 3-D tiles: tl.dot on [B, M, K] x [B, K, N] tiles."""
import torch
import triton
import triton.language as tl


@triton.jit
def dot3d_kernel(a_ptr, b_ptr, c_ptr, BATCH: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    pid = tl.program_id(0)
    rb = tl.arange(0, BATCH)
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    base = pid * BATCH
    a = tl.load(a_ptr + (base + rb)[:, None, None] * (M * K) + rm[None, :, None] * K + rk[None, None, :])
    b = tl.load(b_ptr + (base + rb)[:, None, None] * (K * N) + rk[None, :, None] * N + rn[None, None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + (base + rb)[:, None, None] * (M * N) + rm[None, :, None] * N + rn[None, None, :], c)


def dot3d(a, b):
    B, M, K = a.shape
    N = b.shape[2]
    c = torch.empty((B, M, N), device=a.device, dtype=torch.float32)
    dot3d_kernel[(B // 4,)](a, b, c, BATCH=4, M=M, N=N, K=K)
    return c

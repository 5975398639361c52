"""A matrix-vector product whose K-loop loads skip the mask when K is a multiple of BLOCK_K,
decided by @triton.heuristics."""
import torch
import triton
import triton.language as tl


@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def gemv_kernel(a_ptr, x_ptr, y_ptr, M, K, stride_am,
                BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        if EVEN_K:
            a = tl.load(a_ptr + rows[:, None] * stride_am + cols[None, :])
            x = tl.load(x_ptr + cols)
        else:
            a = tl.load(a_ptr + rows[:, None] * stride_am + cols[None, :], mask=cols[None, :] < K, other=0.0)
            x = tl.load(x_ptr + cols, mask=cols < K, other=0.0)
        acc += tl.sum(a.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)
    tl.store(y_ptr + rows, acc, mask=rows < M)


def gemv(a, x):
    M, K = a.shape
    y = torch.empty((M,), device=a.device, dtype=torch.float32)
    gemv_kernel[(triton.cdiv(M, 64),)](a, x, y, M, K, a.stride(0), BLOCK_M=64, BLOCK_K=128)
    return y

"""Row sums of a matrix: a block of rows per program, looping over the columns."""
import torch
import triton
import triton.language as tl


@triton.jit
def sum_rows_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :],
                    mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0)
        acc += tl.sum(x, axis=1)
    tl.store(out_ptr + rows, acc, mask=rows < M)


def sum_rows(x):
    M, N = x.shape
    out = torch.empty((M,), dtype=torch.float32, device=x.device)
    sum_rows_kernel[(triton.cdiv(M, 16),)](x, out, M, N, x.stride(0), BLOCK_M=16, BLOCK_N=256)
    return out

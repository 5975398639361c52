"""Batched scores Q K^T: each program's batch base made once as a name (`q_base = q_ptr +
bh * stride_qb`), K read through its transpose (B is K-major: (batch, N, K) in memory)."""

import torch
import triton
import triton.language as tl


@triton.jit
def scores_kernel(q_ptr, k_ptr, s_ptr, M, N, D,
                  stride_qb, stride_qm, stride_qd,
                  stride_kb, stride_kn, stride_kd,
                  stride_sb, stride_sm, stride_sn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    bh = tl.program_id(2)
    q_base = q_ptr + bh * stride_qb
    k_base = stride_kb * tl.program_id(2) + k_ptr
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        ds = d0 + tl.arange(0, BLOCK_D)
        q = tl.load(q_base + rows[:, None] * stride_qm + ds[None, :] * stride_qd,
                    mask=(rows[:, None] < M) & (ds[None, :] < D), other=0.0)
        k = tl.load(k_base + ds[:, None] * stride_kd + cols[None, :] * stride_kn,
                    mask=(ds[:, None] < D) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(q, k)
    s_base = s_ptr + bh * stride_sb
    tl.store(s_base + rows[:, None] * stride_sm + cols[None, :] * stride_sn, acc.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def scores(q, k):
    batch, M, D = q.shape
    N = k.shape[1]
    s = torch.empty((batch, M, N), device=q.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128), batch)
    scores_kernel[grid](q, k, s, M, N, D,
                        q.stride(0), q.stride(1), q.stride(2),
                        k.stride(0), k.stride(1), k.stride(2),
                        s.stride(0), s.stride(1), s.stride(2),
                        BLOCK_M=128, BLOCK_N=128, BLOCK_D=64)
    return s

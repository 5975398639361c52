"""RMS normalisation over the last dimension of a (B, H, N) tensor: one program per (b, h)
row on a 2-D grid, the row walked in blocks twice (the sum of squares, then the scaled copy)."""

import torch
import triton
import triton.language as tl


@triton.jit
def rms_rows(x_ptr, y_ptr, N, stride_b, stride_h, eps, BLOCK: tl.constexpr, split_parts,
             SPLIT_ROWS: tl.constexpr,
             SPLIT_STAGE: tl.constexpr):
    # split-rows: SPLIT_ROWS programs per row, a chunk of the columns each; stage k reduces its chunk of
    # reduction loop k to partial values, later stages combine the row's partials
    part = tl.program_id(2)
    part_base = (tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)) * SPLIT_ROWS
    part_ids = part_base + tl.arange(0, SPLIT_ROWS)
    b = tl.program_id(0)
    h = tl.program_id(1)
    base = b * stride_b + h * stride_h
    ss = 0.0
    if SPLIT_STAGE == 0:
        chunk = tl.cdiv(tl.cdiv(N, SPLIT_ROWS), BLOCK) * BLOCK
        chunk_lo = part * chunk
        for start in tl.range(chunk_lo, tl.minimum(chunk_lo + chunk, N), BLOCK, num_stages=2):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + base + offs, mask=offs < N, other=0.0).to(tl.float32)
            ss += tl.sum(x * x, axis=0)
        tl.store(split_parts + (part_base + part) * 1 + 0, ss.to(tl.float64))
    else:
        ss_parts = tl.load(split_parts + part_ids * 1 + 0).to(tl.float32)
        ss = tl.sum(ss_parts, axis=0)
        scale = 1.0 / tl.sqrt(ss / N + eps)
        chunk_2 = tl.cdiv(tl.cdiv(N, SPLIT_ROWS), BLOCK) * BLOCK
        chunk_lo_2 = part * chunk_2
        for start in range(chunk_lo_2, tl.minimum(chunk_lo_2 + chunk_2, N), BLOCK):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + base + offs, mask=offs < N, other=0.0).to(tl.float32)
            tl.store(y_ptr + base + offs, (x * scale).to(y_ptr.dtype.element_ty), mask=offs < N)


def rms(x, eps=1e-6):
    B, H, N = x.shape
    y = torch.empty_like(x)
    grid = (B, H)
    split_rows = 8
    split_parts = torch.empty(B * H * split_rows * 1, dtype=torch.float64, device=x.device)
    rms_rows[(B, H, split_rows)](x, y, N, x.stride(0), x.stride(1), eps, BLOCK=1024, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=0, num_warps=4)
    rms_rows[(B, H, split_rows)](x, y, N, x.stride(0), x.stride(1), eps, BLOCK=1024, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=1, num_warps=4)
    return y

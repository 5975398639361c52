"""Each row minus its mean: the loop variable bound again with an alignment hint, the launch
over several lines with a trailing comma."""

import torch
import triton
import triton.language as tl


@triton.jit
def center_rows(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr, split_parts, SPLIT_ROWS: tl.constexpr, SPLIT_STAGE: tl.constexpr):
    # split-rows: SPLIT_ROWS programs per row, a chunk of the columns each; stage k reduces its chunk of
    # reduction loop k to partial values, later stages combine the row's partials
    part = tl.program_id(1)
    part_base = tl.program_id(0) * SPLIT_ROWS
    part_ids = part_base + tl.arange(0, SPLIT_ROWS)
    row = tl.program_id(0)
    total = 0.0
    if SPLIT_STAGE == 0:
        chunk = tl.cdiv(tl.cdiv(N, SPLIT_ROWS), BLOCK) * BLOCK
        chunk_lo = part * chunk
        for start in range(chunk_lo, tl.minimum(chunk_lo + chunk, N), BLOCK):
            start = tl.multiple_of(start, BLOCK)
            offs = start + tl.arange(0, BLOCK)
            total += tl.sum(tl.load(x_ptr + row * stride + offs, mask=offs < N, other=0.0), axis=0)
        tl.store(split_parts + (part_base + part) * 1 + 0, total.to(tl.float64))
    else:
        total_parts = tl.load(split_parts + part_ids * 1 + 0).to(tl.float32)
        total = tl.sum(total_parts, axis=0)
        mean = total / N
        chunk_2 = tl.cdiv(tl.cdiv(N, SPLIT_ROWS), BLOCK) * BLOCK
        chunk_lo_2 = part * chunk_2
        for start in range(chunk_lo_2, tl.minimum(chunk_lo_2 + chunk_2, N), BLOCK):
            start = tl.multiple_of(start, BLOCK)
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride + offs, mask=offs < N, other=0.0)
            tl.store(y_ptr + row * stride + offs, x - mean, mask=offs < N)


def center(x):
    y = torch.empty_like(x)
    split_rows = 8
    split_parts = torch.empty(x.shape[0] * split_rows * 1, dtype=torch.float64, device=x.device)
    center_rows[(x.shape[0], split_rows)](
        x,
        y,
        x.shape[1],
        x.stride(0),
        BLOCK=256, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=0,
    )
    center_rows[(x.shape[0], split_rows)](
        x,
        y,
        x.shape[1],
        x.stride(0),
        BLOCK=256, split_parts=split_parts, SPLIT_ROWS=split_rows, SPLIT_STAGE=1,
    )
    return y

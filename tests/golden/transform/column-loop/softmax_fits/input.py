"""Row-wise softmax whose block and warps come together from a settings helper (a tuple
unpacked at run time), as many projects write it: the block cannot be searched, but
column-loop makes it a step and caps it at the launch."""

import torch
import triton
import triton.language as tl


def row_settings(n):
    block = triton.next_power_of_2(n)
    return block, (32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4)


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_stride + cols, y, mask=mask)


def softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    BLOCK, warps = row_settings(cols)
    softmax_rows[(rows,)](out, x, cols, x.stride(0), out.stride(0), BLOCK=BLOCK, num_warps=warps)
    return out

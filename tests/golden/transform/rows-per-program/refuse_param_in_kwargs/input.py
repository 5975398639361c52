"""Row-wise softmax whose block size reaches the kernel through a dict the launch unpacks: the
dict hides a kernel parameter, so the launch's bindings are not all known."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_stride + cols, y, mask=mask)


def softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(cols)
    options = {"num_warps": 4}
    options["BLOCK"] = BLOCK
    softmax_rows[(rows,)](out, x, cols, x.stride(0), out.stride(0), **options)
    return out

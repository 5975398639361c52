"""A row sum that also counts the row's elements from the bounds comparison: the comparison
is a value there, not a mask, and the pass must refuse."""
import torch
import triton
import triton.language as tl


@triton.jit
def mean_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    count = 0
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        inside = cols < n_cols
        total += tl.sum(tl.load(x_ptr + row * stride + cols, mask=inside, other=0.0), axis=0)
        count += tl.sum(inside.to(tl.int32), axis=0)
    tl.store(out_ptr + row, total / count)


def row_mean(x):
    out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    mean_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=1024)
    return out

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, stride, CHUNKS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c in tl.static_range(0, CHUNKS):
        cols = c * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def row_sum(x):
    rows, cols = x.shape
    out = torch.empty(rows, device=x.device, dtype=torch.float32)
    row_sum_kernel[(rows,)](x, out, x.stride(0), CHUNKS=cols // 256, BLOCK=256)
    return out

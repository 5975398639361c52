"""A fixed-size inner loop unrolled with tl.static_range, inside an outer tl.range loop with
its own pipelining depth."""
import torch
import triton
import triton.language as tl


@triton.jit
def poly_kernel(x_ptr, coef_ptr, y_ptr, n, BLOCK: tl.constexpr, DEGREE: tl.constexpr, CHUNKS: tl.constexpr):
    pid = tl.program_id(0)
    for c in tl.range(0, CHUNKS, num_stages=2):
        offs = (pid * CHUNKS + c) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for d in tl.static_range(DEGREE):
            w = tl.load(coef_ptr + d)
            acc = acc * x + w
        tl.store(y_ptr + offs, acc, mask=offs < n)


def poly(x, coef):
    n = x.numel()
    y = torch.empty_like(x)
    poly_kernel[(triton.cdiv(n, 4 * 512),)](x, coef, y, n, BLOCK=512, DEGREE=coef.numel(), CHUNKS=4)
    return y

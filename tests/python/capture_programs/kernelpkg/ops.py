import torch
import triton
import triton.language as tl

from .consts import SHIFT


@triton.heuristics({"BLOCK": lambda args: 64 if args["n"] < 1500 else 256})
@triton.jit
def shift_kernel(src_ptr, dst_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m) + shift, mask=m)


def shift_into(buf, n):
    """Reads buf[:n], writes buf[n:2n]: two views of one buffer."""
    shift_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](buf, buf[n:], n, SHIFT)
    return buf


@triton.jit
def square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x * x, mask=m)


def square(x):
    out = torch.empty_like(x)
    n = x.numel()
    square_kernel[(triton.cdiv(n, 2048),)](x, out, n, BLOCK=2048)
    return out

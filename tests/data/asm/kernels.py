"""Small Triton kernels whose compiled texts (tests/data/asm/*.ttgir, .ptx, .sass) the static
facts tests read. Regenerate the texts with `python3 tests/data/asm/generate.py` (no GPU
needed: ahead-of-time compile for sm_90)."""

import triton
import triton.language as tl


@triton.jit
def dot_tile(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c = tl.dot(a, b, input_precision=PREC)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)


@triton.jit
def row_softmax(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n + cols, mask=cols < n, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * n + cols, y, mask=cols < n)


@triton.jit
def add_vec(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

"""Constructs the analysis does not model: a while loop, inline assembly, a call to a
Python function that is not @triton.jit, random numbers. It must report them as not
understood and still analyse the rest."""
import triton
import triton.language as tl


def host_helper(x):
    return x * 2


@triton.jit
def odd_kernel(x_ptr, y_ptr, n, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    i = 0
    while i < 3:
        x = x * 0.5
        i += 1
    r = tl.rand(seed, offs)
    z = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    w = host_helper(z)
    tl.store(y_ptr + offs, z + r, mask=offs < n)

"""Planted fault: every program spins on a flag that nobody sets."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, n, flag_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    flag = tl.load(flag_ptr)
    while flag == 0:
        flag = tl.load(flag_ptr, volatile=True)
    tl.store(out_ptr + offs, 2 * x + y, mask=mask)


def scale_add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    flag = torch.zeros(1, dtype=torch.int32, device=x.device)
    scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, flag, BLOCK=1024)
    return out

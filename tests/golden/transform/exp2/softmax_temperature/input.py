"""Row softmax with a temperature: exp((x - max) / t) / sum."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_t_kernel(out_ptr, in_ptr, n_cols, t, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    num = tl.exp((x - m) / t)
    tl.store(out_ptr + row * n_cols + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)


def softmax_t(x, t):
    out = torch.empty_like(x)
    softmax_t_kernel[(x.shape[0],)](out, x, x.shape[1], t, BLOCK=triton.next_power_of_2(x.shape[1]))
    return out

"""A scan that reads back what it wrote at the step before (in place): the loads of a step
depend on the previous step's store."""

import torch
import triton
import triton.language as tl


@triton.jit
def running_sum_kernel(x_ptr, T, N: tl.constexpr):
    offs = tl.arange(0, N)
    p = x_ptr + offs
    for t in range(1, T):
        prev = tl.load(p + (t - 1) * N)
        cur = tl.load(p + t * N)
        tl.store(p + t * N, prev + cur)


def running_sum(x):
    running_sum_kernel[(1,)](x, x.shape[0], N=x.shape[1])
    return x

"""A GPU program for the replay check: column sums of a tall matrix, each block adding its
partial sums into the output with tl.atomic_add, so that the order of the additions (and the
last bits of the sums) varies from run to run."""

import torch
import triton
import triton.language as tl


@triton.jit
def column_sum_kernel(x_ptr, out_ptr, rows, cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    m = (r[:, None] < rows) & (c[None, :] < cols)
    x = tl.load(x_ptr + r[:, None] * cols + c[None, :], mask=m, other=0.0)
    tl.atomic_add(out_ptr + c, tl.sum(x, axis=0), mask=c < cols)


def column_sums(x):
    rows, cols = x.shape
    out = torch.zeros(cols, dtype=torch.float32, device=x.device)
    column_sum_kernel[(triton.cdiv(rows, 64), triton.cdiv(cols, 128))](x, out, rows, cols, BLOCK_R=64, BLOCK_C=128)
    return out


def main():
    torch.manual_seed(0)
    x = torch.randn(1 << 16, 256, device="cuda")
    sums = column_sums(x)
    print(f"max |column sum - torch| {float((sums - x.sum(0)).abs().max()):.3g}")


if __name__ == "__main__":
    main()

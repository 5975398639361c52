"""A program with Triton kernels launched in the ways real code launches them, for the capture
tests: a plain launch through a wrapper, an autotuned kernel with a grid function, and a
heuristics-wrapped kernel of a package (kernelpkg) whose input and output are views of one buffer.
Runs on the CPU under TRITON_INTERPRET=1, or on a GPU (DEVICE=cuda).

Arguments: a count of distinct sizes (default 2), then "fail" to raise after the launches."""

import os
import sys

import torch
import triton
import triton.language as tl
from kernelpkg.ops import shift_into

DEVICE = os.environ.get("DEVICE", "cpu")


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=2)], key=["n"])
@triton.jit
def scale_kernel(x_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)


def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out


def main():
    sizes = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    total = 0.0
    for i in range(sizes):
        n = 1000 * (i + 1)
        x = torch.arange(n, dtype=torch.float32, device=DEVICE)
        y = torch.ones(n, dtype=torch.float32, device=DEVICE)
        z = add(x, y)
        z = add(z, y)  # the same shapes again: one more launch, no new signature
        scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](z, n, 2.0)
        buf = torch.zeros(2 * n, dtype=torch.float32, device=DEVICE)
        buf[:n] = z
        shift_into(buf, n)  # views of one buffer, in a package
        total += float(buf.sum())
    print(f"total {total}")
    if "fail" in sys.argv:
        raise SystemExit("failing on purpose after the launches")


if __name__ == "__main__":
    main()

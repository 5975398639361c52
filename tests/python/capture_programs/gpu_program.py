"""A GPU program for the capture tests: an autotuned kernel with two configurations (its
benchmark launches must not count as the program's), a plain kernel of a package, and a torch.compile'd
function (Inductor's kernels are launched outside @triton.jit's call). With PROFILE=path, the
launches run under torch.profiler too and the profiler's GPU time per kernel name is written
there, to compare with the capture's."""

import json
import os

import torch
import triton
import triton.language as tl
from kernelpkg.ops import square


@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 4096}, num_warps=8)],
                 key=["n"])
@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def step(x, y):
    n = x.numel()
    out = torch.empty_like(x)
    axpy_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, 2.0)
    return square(out)


def main():
    n = 1 << 24
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    step(x, y)  # autotunes
    compiled = torch.compile(lambda t: torch.sin(t) * 2 + 1) if os.environ.get("COMPILE") else None
    if compiled is not None:
        compiled(x)
    torch.cuda.synchronize()
    profile_path = os.environ.get("PROFILE")
    if profile_path:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(20):
                step(x, y)
            torch.cuda.synchronize()
        per_name = {}
        for e in prof.events():
            if e.device_type.name == "CUDA":
                per_name[e.name] = per_name.get(e.name, 0.0) + e.device_time / 1e3
        with open(profile_path, "w") as f:
            json.dump(per_name, f)
    else:
        for _ in range(20):
            step(x, y)
    if compiled is not None:
        for _ in range(5):
            compiled(x)
    torch.cuda.synchronize()
    print("done")


if __name__ == "__main__":
    main()

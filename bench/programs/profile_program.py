"""Runs a Python program inside torch.profiler and writes each GPU kernel's total time and
launch count (JSON: {name: {"ms": ..., "launches": ...}}, and "total_ms"): the reference that
`tritonforge capture`'s per-kernel times are compared with, from the same run when the capture
runs this script.

Usage: python profile_program.py OUT.json PROGRAM.py ARGS..."""

import json
import runpy
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def main():
    out, program = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[2:]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        runpy.run_path(program, run_name="__main__")
        torch.cuda.synchronize()
    kernels, total = {}, 0.0
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA or e.name.startswith(("Memcpy", "Memset")):
            continue  # kernels only, as capture --timing profiler counts them
        us = getattr(e, "device_time_total", None)
        if us is None:
            us = getattr(e, "cuda_time_total", 0.0)
        k = kernels.setdefault(e.name, {"ms": 0.0, "launches": 0})
        k["ms"] += us / 1e3
        k["launches"] += 1
        total += us / 1e3
    with open(out, "w") as f:
        json.dump({"total_ms": total, "kernels": kernels}, f, indent=1)


if __name__ == "__main__":
    main()

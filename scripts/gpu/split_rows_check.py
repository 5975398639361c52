#!/usr/bin/env python3
"""What the split-rows pass's own output gives (issue 13, deliverable 4), beside the kernel it
came from and torch, at few and many rows.

    python3 scripts/gpu/split_rows_check.py OUT_DIR [--quick]

The kernel is the suite's softmax_decode as written (one program per row: an online max and
sum over the row in blocks, then the normalized output; fp32). For each split S, the pass
rewrites it with `tritonforge transform --pass split-rows:split=S` (build/tritonforge, the
binary under test); each variant is checked against torch.softmax in fp64 (the suite's
tolerance) and timed like bench/run (CUDA events, L2 flushed, medians). Writes
OUT_DIR/split_rows_check.json and prints one line per shape."""

import importlib.util
import json
import os
import subprocess
import sys

import torch
import triton

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib.measure import time_fn  # noqa: E402

KERNEL = os.path.join(ROOT, "bench", "kernels", "softmax_decode")


def load(path, n=[0]):
    n[0] += 1
    spec = importlib.util.spec_from_file_location(f"split_rows_check_{n[0]}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    out_dir = sys.argv[1]
    quick = "--quick" in sys.argv
    os.makedirs(out_dir, exist_ok=True)
    splits = [4, 16, 32, 64, 128, 256]
    shapes = [(4, 1 << 22), (16, 1 << 20), (16, 256000), (64, 1 << 18), (1024, 32000)]
    if quick:
        splits, shapes = [4, 16], [(3, 5000)]
    variants = {"as written": load(os.path.join(KERNEL, "softmax_decode.py")).softmax_decode}
    tf = os.path.join(ROOT, "build", "tritonforge")
    for s in splits:
        path = os.path.join(out_dir, f"softmax_decode_split{s}.py")
        subprocess.run([tf, "transform", os.path.join(KERNEL, "softmax_decode.py"), "--task",
                        os.path.join(KERNEL, "task.toml"), "--pass", f"split-rows:split={s}", "--no-compile", "-o", path],
                       check=True, stderr=subprocess.DEVNULL)
        variants[f"split {s}"] = load(path).softmax_decode
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    results = []
    for rows, n in shapes:
        x = torch.randn(rows, n, device=dev, dtype=torch.float32) * 3
        ref = torch.softmax(x.double(), dim=-1)
        entry = {"rows": rows, "cols": n, "torch": time_fn(lambda: torch.softmax(x, dim=-1))["median_ms"]}
        y = torch.empty_like(x)
        entry["copy"] = time_fn(lambda: y.copy_(x))["median_ms"]
        for name, fn in variants.items():
            ok = bool(torch.allclose(fn(x).double(), ref, rtol=1e-4, atol=1e-8))
            entry[name] = time_fn(lambda: fn(x))["median_ms"] if ok else "WRONG"
        results.append(entry)
        print(json.dumps(entry), flush=True)
    with open(os.path.join(out_dir, "split_rows_check.json"), "w") as f:
        json.dump({"results": results, "torch": torch.__version__, "triton": triton.__version__,
                   "gpu": torch.cuda.get_device_name() if dev == "cuda" else "cpu"}, f, indent=1)


if __name__ == "__main__":
    main()

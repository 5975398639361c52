#!/usr/bin/env python3
"""Checks gluon-attention's output on the GPU: each given kernel file, transformed by the pass
(tritonforge transform), is launched through its task's launcher on the task's cases; the
output must match the kernel as written (the suite's attention tolerance) and the route must
have taken the Gluon template (its plan cache filled, no refusal); both are timed like
bench/run (CUDA events, L2 flushed, medians), interleaved in one process.

    python3 scripts/gpu/gluon_attention_route_check.py bench/kernels/attention_gqa [...]

Needs the tritonforge binary at build/tritonforge, torch, Triton 3.6 with Gluon, an sm_90 GPU."""

import importlib.util
import os
import subprocess
import sys
import time
import tomllib

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib.measure import time_fn  # noqa: E402


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    import triton
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__,
          time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), flush=True)
    for folder in sys.argv[1:]:
        task = tomllib.load(open(os.path.join(folder, "task.toml"), "rb"))
        src = os.path.join(folder, task["source"])
        out = f"/tmp/routed_{task['name']}.py"
        r = subprocess.run([os.path.join(ROOT, "build", "tritonforge"), "transform", src, "--pass", "gluon-attention",
                            "--no-compile", "-o", out], capture_output=True, text=True)
        if r.returncode != 0:
            print(task["name"], "REFUSED", r.stderr.strip(), flush=True)
            continue
        orig = load(src, "orig_" + task["name"])
        routed = load(out, "routed_" + task["name"])
        harness = load(os.path.join(folder, task["harness"]), "h_" + task["name"])
        for case in task["cases"]:
            inputs = harness.make_inputs(case, 0)
            a = getattr(orig, task["launcher"])(*inputs)
            b = getattr(routed, task["launcher"])(*inputs)
            plans = [v for k, v in vars(routed).items() if k.endswith("_attention_PLANS")][0]
            taken = [p for p in plans.values() if not isinstance(p, str)]
            refused = [p for p in plans.values() if isinstance(p, str)]
            err = (a.float() - b.float()).abs().max().item()
            ok = torch.allclose(a.float(), b.float(), rtol=task["check"]["rtol"], atol=task["check"]["atol"])
            ms = lambda fn: time_fn(fn)["median_ms"]  # noqa: E731
            ta = ms(lambda: getattr(orig, task["launcher"])(*inputs))
            tb = ms(lambda: getattr(routed, task["launcher"])(*inputs))
            ta2 = ms(lambda: getattr(orig, task["launcher"])(*inputs))
            tb2 = ms(lambda: getattr(routed, task["launcher"])(*inputs))
            written, route = min(ta, ta2), min(tb, tb2)
            vendor = {}
            for name, fn in (harness.vendors() if hasattr(harness, "vendors") else {}).items():
                try:
                    vendor[name] = ms(lambda: fn(*inputs))
                except Exception as e:  # a backend that cannot run this case
                    vendor[name] = f"fails ({type(e).__name__})"
            timed = {k: v for k, v in vendor.items() if not isinstance(v, str)}
            best = min(timed.values()) if timed else None
            line = (f"{task['name']} {case}: routed={bool(taken)} refused={refused} max|diff|={err:.2e} match={ok} "
                    f"as-written {written:.4f} ms, routed {route:.4f} ms, {written / route:.2f}x")
            if best is not None:
                line += f"; fastest vendor {best:.4f} ms, routed/vendor speed {best / route:.2f}"
            print(line, flush=True)
            print("   vendors:", ", ".join(f"{k} {v:.4f} ms" if not isinstance(v, str) else f"{k} {v}"
                                         for k, v in vendor.items()), flush=True)


if __name__ == "__main__":
    main()

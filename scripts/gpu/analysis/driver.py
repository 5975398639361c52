"""Runs the kernels of scripts/gpu/analysis on the GPU (called by analysis_predictions.sh).

  python3 driver.py access   launches every access-pattern kernel once (under ncu)
  python3 driver.py smem     launches the kept and the pruned matmul configuration; prints
                             one JSON line per configuration: {"config", "status", "detail"}
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def access():
    import access_patterns as ap
    import access_patterns_harness as h
    inputs = h.make_inputs({"N": 1 << 20, "S": 4096}, 0)
    ap.run_all(*inputs)
    torch.cuda.synchronize()
    x, big, y, square, square_t = inputs
    # the last kernel (naive transpose) wrote square_t; check it so a broken run is visible
    assert torch.equal(square_t, square.t()), "transpose_naive_kernel computed a wrong result"
    print("access kernels ran")


def smem():
    import smem_configs as sc
    import smem_configs_harness as h
    a, b = h.make_inputs({"M": 4096, "N": 4096, "K": 4096}, 0)
    ref = (a.float() @ b.float())
    for name, fn in (("kept", sc.launch_kept), ("pruned", sc.launch_pruned)):
        try:
            c = fn(a, b)
            torch.cuda.synchronize()
            err = (c.float() - ref).abs().max().item()
            ok = err < 1.0
            print(json.dumps({"config": name, "status": "ok" if ok else "wrong-result", "detail": f"max abs error {err:.3g}"}))
        except Exception as exc:  # the pruned configuration must land here
            print(json.dumps({"config": name, "status": "failed", "detail": f"{type(exc).__name__}: {str(exc)[:300]}"}))
        sys.stdout.flush()


if __name__ == "__main__":
    {"access": access, "smem": smem}[sys.argv[1]]()

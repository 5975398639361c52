#!/usr/bin/env python3
"""Checks the worker's timing against a heavy launcher: a short kernel behind Python work on the
host (an allocation and a busy wait standing in for an autograd.Function's bookkeeping), timed
with and without the GPU sleep that queues each repetition ahead of the host, idle and with
every core busy. Writes timing_ahead.json into the folder given as the first argument.

  scripts/gpu-run.sh script:scripts/gpu/timing_ahead.py
"""
import json
import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def _spin(stop_at):
    while time.time() < stop_at:
        pass


def main():
    import torch
    from tritonforge_worker import runner
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    x = torch.randn(4096, 4096, device="cuda")
    y = torch.empty_like(x)

    def kernel_only():
        torch.mul(x, 2.0, out=y)

    def heavy(host_us):
        def fn():
            t = time.perf_counter() + host_us * 1e-6
            tmp = torch.empty(1024, device="cuda")
            while time.perf_counter() < t:
                pass
            torch.mul(x, 2.0, out=y)
            del tmp
        return fn

    rows = []
    for load in (False, True):
        procs = []
        if load:
            stop_at = time.time() + 60
            procs = [multiprocessing.Process(target=_spin, args=(stop_at,)) for _ in range(os.cpu_count() or 4)]
            for p in procs:
                p.start()
        try:
            for name, fn in (("kernel alone", kernel_only), ("50 us host", heavy(50)),
                             ("200 us host", heavy(200))):
                for ahead in (False, True):
                    times = runner._time_events(fn, 400, 10, 2000, True, ahead=ahead)
                    s = runner.summarize_times(times, "events+l2flush")
                    rows.append({"launcher": name, "cpu_load": load, "ahead": ahead,
                                 "median_us": round(s["median_ms"] * 1e3, 2),
                                 "noise": round(s["noise"], 3), "reps": s["reps"]})
                    print(json.dumps(rows[-1]), flush=True)
        finally:
            for p in procs:
                p.terminate()
    print("sleep cycles per ms:", runner._sleep_cycles_per_ms())
    with open(os.path.join(out, "timing_ahead.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

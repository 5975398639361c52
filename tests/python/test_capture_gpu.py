"""The capture recorder on the GPU: CUDA-event times against torch.profiler's for the same
launches (printed, and bounded), an autotuner's benchmark launches kept apart, and torch.compile's kernels listed as
not tunable."""

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "python" / "capture_programs" / "gpu_program.py"
BOOT = ROOT / "python" / "tritonforge_worker" / "capture" / "boot"

pytestmark = pytest.mark.gpu


def run_captured(tmp_path, **env_extra):
    out = tmp_path / "cap"
    env = dict(os.environ, TRITONFORGE_CAPTURE_DIR=str(out), PYTHONPATH=os.pathsep.join([str(BOOT), str(ROOT / "python")]),
               TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER="0", TORCHINDUCTOR_FX_GRAPH_CACHE="0", **env_extra)
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run([sys.executable, str(PROGRAM)], env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = glob.glob(str(out / "launches" / "*.json"))
    assert len(files) == 1
    return json.loads(Path(files[0]).read_text())


def test_gpu_times_match_the_profiler_and_benchmark_launches_are_apart(tmp_path):
    profile = tmp_path / "profile.json"
    record = run_captured(tmp_path, PROFILE=str(profile))
    assert record["timing"] == "cuda-events"
    kernels = {k["name"]: k for k in record["kernels"]}
    axpy, square = kernels["axpy_kernel"], kernels["square_kernel"]
    assert axpy["launches"] == 21 and square["launches"] == 21
    assert axpy["bench_launches"] > 0  # two configurations benchmarked, not counted as launches
    assert axpy["via"] == ["autotuner"]
    # Saved around the program's call, before the autotuner's benchmark wrote the output: the
    # output's span is recorded as changed.
    snap = axpy["signatures"][0]["snapshot"]
    assert snap is not None
    assert snap["spans"][snap["tensors"]["out_ptr"]["span"]]["after"] is not None
    prof = json.loads(profile.read_text())
    # The 20 profiled launches against the capture's 21 (one before the profiler): the mean per
    # launch. CUDA events also hold the few microseconds between the hook and the kernel's start
    # when the GPU waits for the launch (measured on an H100: +17% on a 68 us kernel): they are
    # no closer than 25%, and never below the profiler's time by more than 5%.
    for name, k in (("axpy_kernel", axpy), ("square_kernel", square)):
        ours = k["time_ms"] / k["launches"]
        theirs = prof[name] / 20
        print(f"{name}: capture {ours * 1e3:.1f} us per launch, torch.profiler {theirs * 1e3:.1f} us")
    for name, k in (("axpy_kernel", axpy), ("square_kernel", square)):
        ours, theirs = k["time_ms"] / k["launches"], prof[name] / 20
        assert 0.95 * theirs <= ours <= 1.25 * theirs, (name, ours, theirs)


def test_torch_compile_kernels_are_listed_as_not_tunable(tmp_path):
    record = run_captured(tmp_path, COMPILE="1")
    inductor = [("outside", o) for o in record["outside"]] + \
        [("jit", k) for k in record["kernels"] if k["name"].startswith("triton_")]
    print("inductor:", [(how, k["name"], k["launches"], round(k["time_ms"], 3)) for how, k in inductor])
    assert inductor, "Inductor's kernels were not seen"
    assert all("torch.compile" in k["why_not"] for _, k in inductor)
    assert sum(k["launches"] for _, k in inductor) >= 5

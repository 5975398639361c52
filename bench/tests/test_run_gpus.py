"""bench/run --gpus: the selection's parsing and resolution against the measurement process's
hello (one CUDA_VISIBLE_DEVICES value per GPU, the user's numbering kept), and bad input as
one line with exit 2. The parallel run itself needs GPUs (scripts/gpu/multi_gpu.sh)."""

import importlib.machinery
import importlib.util
import os
import subprocess
import sys

import pytest

BENCH = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def _load_run():
    loader = importlib.machinery.SourceFileLoader("bench_run_script", os.path.join(BENCH, "run"))
    spec = importlib.util.spec_from_loader("bench_run_script", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


run = _load_run()
TWO = {"name": "H200", "device_count": 2, "devices": ["H200", "H200"]}


def test_parse_and_resolve():
    assert run.parse_gpus(None) is None
    assert run.resolve_gpus(None, TWO) == [None]
    assert run.resolve_gpus(run.parse_gpus("all"), TWO) == ["0", "1"]
    assert run.resolve_gpus(run.parse_gpus("1"), TWO) == ["0"]
    assert run.resolve_gpus(run.parse_gpus("1,0"), TWO, "5,7") == ["7", "5"]
    assert run.resolve_gpus(run.parse_gpus("all"), None) == [None]  # no GPU: as before
    for bad in ("x", "0", "1,1", "1,"):
        with pytest.raises(ValueError):
            run.parse_gpus(bad)
    with pytest.raises(ValueError, match="only 2 GPU"):
        run.resolve_gpus(run.parse_gpus("3"), TWO)
    with pytest.raises(ValueError, match="different models"):
        run.resolve_gpus(run.parse_gpus("all"), {"device_count": 2, "devices": ["H200", "H100"]})


def test_budget_is_planned_over_the_gpus():
    class Args:
        interpret = False
        deadline = 100
        budget = 45
        min_budget = 8
    # Four kernels left, 20 s overhead each: one GPU has 100/4 - 20 = 5 s each (below the
    # minimum); two GPUs run two each: 100/2 - 20 = 30 s.
    assert run.plan_budget(Args, 0, 4, 20) == 8
    assert run.plan_budget(Args, 0, 4, 20, lanes=2) == 30


def test_bad_gpus_is_one_line_and_exit_two():
    p = subprocess.run([sys.executable, os.path.join(BENCH, "run"), "--gpus", "a,b", "--list"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert p.stderr == "bench/run: --gpus a,b: expected all, a count N, or a list like 0,2\n"


def test_interpreter_lanes_run_kernels_in_parallel(tmp_path):
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, os.path.join(BENCH, "run"), "--interpret", "--no-tritonforge", "--gpus", "2",
                        "softmax", "rmsnorm", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    import json
    doc = json.loads((out / "results.json").read_text())
    assert set(doc["kernels"]) == {"softmax", "rmsnorm"}
    assert doc["runs"][-1]["gpus"] == ["0", "1"]
    assert {k["gpu_index"] for k in doc["kernels"].values()} <= {"0", "1"}
    assert "2 GPU(s): 0, 1; one kernel per GPU at a time" in p.stdout
    assert (out / "measure-gpu0.log").exists() and (out / "measure-gpu1.log").exists()
    # The kernels ran: the interpreter's numpy 2.4 fault (int() of a 1-element array) is
    # worked around by benchlib.interpreter_fixes in --interpret runs.
    for name, k in doc["kernels"].items():
        for case in k["cases"]:
            assert case["baseline"].get("status") == "ok", (name, case["baseline"])

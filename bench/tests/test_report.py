"""Derived figures, the summary against the targets, the Markdown table and the budget plan,
on made-up measurements (no GPU)."""

import importlib.machinery
import importlib.util
import math
import os
import types

import pytest

from benchlib import report, suite

CEIL = {"dram_bytes_per_s": 4.0e12, "matmul_flops_per_s": {"fp16": 600e12, "bf16": 600e12, "tf32": 300e12}}


def _rec(ms, passed=True):
    return {"status": "ok", "ms": ms, "verify": {"passed": passed}}


def _entry(name, peak, flops, nbytes, base, tf, at, vend, tf_status="improved", wall=30.0):
    return {"name": name, "status": "done", "peak": peak, "vendor_name": "v",
            "tritonforge": {"status": tf_status, "wall_s": wall, "evaluated": 12},
            "cases": [{"case": {"M": 1}, "flops": flops, "bytes": nbytes,
                       "baseline": _rec(base), "tritonforge": _rec(tf) if tf else None,
                       "autotune": _rec(at), "vendor": _rec(vend)}]}


def test_roofline_is_the_larger_of_memory_and_compute_time():
    # 1.2 TFLOP at 600 TFLOP/s = 2 ms; 4 GB at 4 TB/s = 1 ms
    assert report.roofline_ms(1.2e12, 4e9, "fp16", CEIL) == pytest.approx(2.0)
    # memory-bound kernels ignore FLOPs
    assert report.roofline_ms(1.2e12, 4e9, None, CEIL) == pytest.approx(1.0)
    assert report.roofline_ms(1e9, 4e9, "tf32", {}) is None


def test_derive_speedups_and_roofline():
    e = report.derive(_entry("mm", "fp16", 1.2e12, 4e9, base=8.0, tf=2.5, at=2.0, vend=2.1), CEIL)
    c = e["cases"][0]
    assert c["roofline_ms"] == pytest.approx(2.0)
    assert c["tritonforge"]["speedup"] == pytest.approx(3.2)
    assert c["tritonforge"]["roofline_pct"] == pytest.approx(80.0)
    assert c["autotune"]["speedup"] == pytest.approx(4.0)
    assert e["speedup"]["tritonforge"] == pytest.approx(3.2)
    assert c["tritonforge"]["flops_per_s"] == pytest.approx(1.2e12 / 2.5e-3)
    assert not e["tritonforge_failed"]


def test_unchanged_result_takes_the_baseline_time_and_failure_counts_one():
    e = _entry("sm", None, 0, 4e9, base=1.25, tf=None, at=1.1, vend=1.3, tf_status="unchanged")
    del e["cases"][0]["tritonforge"]
    report.derive(e, CEIL)
    assert e["cases"][0]["tritonforge"]["ms"] == 1.25
    assert e["speedup"]["tritonforge"] == pytest.approx(1.0)
    f = _entry("ce", None, 0, 4e9, base=1.25, tf=None, at=1.1, vend=1.3, tf_status="timeout")
    del f["cases"][0]["tritonforge"]
    report.derive(f, CEIL)
    assert f["tritonforge_failed"] and f["speedup"]["tritonforge"] == 1.0
    assert "tritonforge" not in f["cases"][0]


def test_wrong_result_earns_no_speedup():
    e = _entry("mm", "fp16", 1.2e12, 4e9, base=8.0, tf=2.5, at=2.0, vend=2.1)
    e["cases"][0]["tritonforge"]["verify"]["passed"] = False
    report.derive(e, CEIL)
    assert "speedup" not in e["cases"][0]["tritonforge"]
    assert e["speedup"]["tritonforge"] is None


def test_summary_against_the_targets():
    kernels = {
        "mm": report.derive(_entry("mm", "fp16", 1.2e12, 4e9, 8.0, 2.0, 2.2, 2.05, wall=50), CEIL),
        "sm": report.derive(_entry("sm", None, 0, 4e9, 2.0, 1.1, 1.2, 1.5, wall=20), CEIL),
        "tr": report.derive(_entry("tr", None, 0, 4e9, 1.0, 1.2, 1.0, 1.0, wall=40), CEIL),
    }
    s = report.summary(kernels)
    assert s["kernels"] == 3
    assert s["geomean_speedup_tritonforge"] == pytest.approx((4.0 * (2.0 / 1.1) * (1 / 1.2)) ** (1 / 3))
    assert s["median_tritonforge_wall_s"] == 40
    assert s["compute_bound_vs_vendor"][0]["vendor_over_tritonforge"] == pytest.approx(1.025)
    assert [m["kernel"] for m in s["memory_bound_dram"] if m["met"]] == ["sm"]   # 91% and 83%
    assert s["slower_than_written"] == [{"kernel": "tr", "ratio": pytest.approx(1.2)}]
    assert s["targets"]["never_slower_than_written"] is False
    assert s["targets"]["median_wall_at_most_60s"] is True
    assert s["targets"]["compute_bound_within_5pct_of_vendor"] == "1/1"


def test_markdown_has_one_row_per_kernel_and_the_summary():
    kernels = {"mm": report.derive(_entry("mm", "fp16", 1.2e12, 4e9, 8.0, 2.0, 2.2, 2.05), CEIL),
               "bad": {"name": "bad", "status": "error", "error": "boom"}}
    doc = {"environment": {"gpu": {"name": "NVIDIA H200"}}, "ceilings": CEIL, "kernels": kernels,
           "summary": report.summary(kernels), "runs": [{"date": "d"}], "args": {"budget": 25}}
    md = report.markdown(doc)
    rows = [l for l in md.splitlines() if l.startswith("| mm ") or l.startswith("| bad ")]
    assert len(rows) == 2
    assert "| 8.000 | 2.000 | 4.00x | 100% |" in rows[0]
    assert "error: boom" in rows[1]
    assert "NVIDIA H200" in md and "4.00 TB/s" in md


def _load_run():
    path = os.path.join(suite.BENCH_DIR, "run")
    loader = importlib.machinery.SourceFileLoader("bench_run_script", path)
    spec = importlib.util.spec_from_loader("bench_run_script", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_budget_plan_fits_the_deadline():
    run = _load_run()
    args = types.SimpleNamespace(budget=25.0, min_budget=8.0, deadline=510.0, interpret=False)
    # Plenty of time: the full budget.
    assert run.plan_budget(args, elapsed=10, kernels_left=5, overhead=20) == 25.0
    # 15 kernels at 20 s overhead in 500 s: (500 - 300) / 15 = 13.3 s each.
    assert run.plan_budget(args, elapsed=10, kernels_left=15, overhead=20) == pytest.approx(13.3)
    # Short of time: never below the floor while one more kernel fits...
    assert run.plan_budget(args, elapsed=470, kernels_left=3, overhead=20) == 8.0
    # ...and nothing when even that does not fit.
    assert run.plan_budget(args, elapsed=490, kernels_left=3, overhead=20) is None

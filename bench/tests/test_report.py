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


def test_markdown_traces_each_result_to_its_passes():
    entry = report.derive(_entry("mm", "fp16", 1.2e12, 4e9, 8.0, 2.0, 2.2, 2.05), CEIL)
    entry["tritonforge"].update(status="improved", passes=["pass exp2 (P2) on base 0", "pass causal-split (P5) on base 1"],
                                best_changes={"mm.BLOCK_M": 128, "mm.num_warps": 8})
    doc = {"environment": {}, "ceilings": CEIL, "kernels": {"mm": entry}, "runs": [], "args": {}}
    md = report.markdown(doc)
    assert "- mm: passes exp2 -> causal-split; BLOCK_M=128 num_warps=8" in md.splitlines()
    entry["tritonforge"].update(passes=["pass persistent (P4) on pass tensor-cores on base 0"], best_changes={})
    assert "- mm: passes tensor-cores + persistent" in report.markdown(doc).splitlines()
    entry["tritonforge"].update(passes=[], best_changes={"mm.BLOCK_M": 64})
    assert "- mm: no pass; BLOCK_M=64" in report.markdown(doc).splitlines()


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


# ---------------------------------------------------------------------------------------
# The real corpus's table


def _real_entry(name, tf, base=1.0, best=None, passed=True):
    case = {"case": {"T": 8}, "flops": 0, "bytes": 4e9, "baseline": _rec(base, passed),
            "vendor": _rec(0.9)}
    if best is not None:
        case["tritonforge"] = _rec(best)
    return {"name": name, "status": "done", "peak": None, "vendor_name": "torch", "pattern": "plain function",
            "tritonforge": tf, "cases": [case]}


def test_real_summary_and_table():
    kernels = {
        "a": report.derive(_real_entry("a", {"status": "improved", "wall_s": 40.0, "best_origin": "search",
                                             "best_changes": {"k.BLOCK": 256, "k.num_warps": 8}}, 1.0, 0.5), CEIL),
        "b": report.derive(_real_entry("b", {"status": "improved", "wall_s": 50.0, "best_origin": "pass tma",
                                             "best_changes": {}}, 2.0, 1.0), CEIL),
        "c": report.derive(_real_entry("c", {"status": "refused", "wall_s": 0.1,
                                             "refusal": "tritonforge: t.toml: key 'launcher' must be a Python function name"}), CEIL),
        "d": report.derive(_real_entry("d", {"status": "skipped"}, passed=False), CEIL),
    }
    s = report.real_summary(kernels)
    assert s["accepted"] == ["a", "b"]
    assert s["refused"] == {"c": "tritonforge: t.toml: key 'launcher' must be a Python function name"}
    assert s["not_run"] == ["d"]
    assert s["geomean_speedup_accepted"] == pytest.approx(2.0)
    assert s["geomean_speedup_all"] == pytest.approx(2.0 ** 0.5)   # c and d (tritonforge not run) count 1.0
    assert s["median_tritonforge_wall_s"] == 45.0
    assert s["as_written_wrong"] == ["d"]
    doc = {"kernels": kernels, "summary": s, "environment": {"gpu": {"name": "NVIDIA H200"}}, "ceilings": CEIL,
           "runs": [{"date": "d"}], "args": {"budget": 60}}
    md = report.real_markdown(doc)
    row_a = next(line for line in md.splitlines() if line.startswith("| a | T=8 "))
    assert "| 1.000 | 0.500 | 2.00x |" in row_a and "BLOCK=256 num_warps=8" in row_a
    assert "pass tma" in next(line for line in md.splitlines() if line.startswith("| b | T=8 "))
    assert "refused: tritonforge: t.toml: key 'launcher'" in md
    assert "| d | T=8 | 1.000 (wrong) |" in md
    assert "tritonforge accepted 2, refused or failed on 1, not run on 1" in md


def test_what_won_names_each_shapes_route_of_a_dispatch():
    tf = {"status": "improved", "best_origin": "per-shape dispatch", "best_changes": {},
          "dispatch": {"feature": "a.shape[0]", "buckets": [{"lo": 8, "hi": 256, "runs": "#21 (BLOCK_M=64)"},
                                                           {"lo": 257, "hi": 8192, "runs": "as written"}]}}
    assert report._what_won(tf) == "per-shape on a.shape[0]: 8..256: #21 (BLOCK_M=64); 257..8192: as written"


def test_what_won_names_the_kernel_only_when_two_share_a_parameter():
    tf = {"status": "improved", "best_changes": {"q.BLOCK_M": 64, "mm.BLOCK_M": 128, "mm.num_warps": 4}}
    assert report._what_won(tf) == "mm.BLOCK_M=128 num_warps=4 q.BLOCK_M=64"
    assert report._what_won({"status": "unchanged"}) == "nothing beat the kernel as written"


def test_real_layout_problem_names_the_missing_step(tmp_path, monkeypatch):
    from benchlib import real
    run = _load_run()
    monkeypatch.setattr(real, "SRC_DIR", str(tmp_path))
    manifest = real.load_manifest()
    assert "run python3 bench/real/layout.py" in run.real_layout_problem(manifest, [])
    (tmp_path / "LAYOUT.json").write_text('{"manifest_sha256": "0"}')
    assert "another version" in run.real_layout_problem(manifest, [])


def test_write_doc_writes_results_html_beside_results_md(tmp_path):
    run = _load_run()
    kernels = {"matmul_fp16": _entry("matmul_fp16", "fp16", 2.7e11, 1.7e8, 0.9, 0.42, 0.45, 0.40)}
    report.derive(kernels["matmul_fp16"], CEIL)
    doc = {"schema": run.SCHEMA, "runs": [], "kernels": kernels, "args": {"budget": 20.0, "effort": "quick"}}
    run.write_doc(doc, str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["results.html", "results.json", "results.md"]
    page = (tmp_path / "results.html").read_text()
    assert "<tr><td>matmul_fp16</td><td class=num>0.9000</td><td class=num>0.4200</td>" in page
    assert "tritonforge effort quick, budget per kernel: up to 20.0 s" in (tmp_path / "results.md").read_text()


def test_effort_and_database_are_passed_on_to_optimize(tmp_path):
    # A stand-in for the tritonforge binary that records its command line and refuses.
    run = _load_run()
    fake = tmp_path / "tritonforge"
    fake.write_text("#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/argv\"\necho 'tritonforge: bad input' >&2\nexit 2\n")
    fake.chmod(0o755)
    spec = suite.load_spec("softmax")
    kdir = tmp_path / "k"
    kdir.mkdir()

    def argv(**kw):
        args = types.SimpleNamespace(work=str(tmp_path), out=str(tmp_path), tritonforge=str(fake), tf_grace=10,
                                     hard_stop=float("inf"), suite="suite", effort=None, tf_db=None,
                                     engine="rules", llm_endpoint=None, llm_max_requests=8)
        args.__dict__.update(kw)
        rec, source = run.run_tritonforge(spec, 20.0, args, str(kdir))
        assert rec["status"] == "refused" and source is None
        return (tmp_path / "argv").read_text().split()

    plain = argv()
    assert "--no-db" in plain and "--effort" not in plain
    quick = argv(effort="quick", tf_db=str(tmp_path / "r.sqlite"))
    assert quick[quick.index("--effort") + 1] == "quick"
    assert quick[quick.index("--db") + 1] == str(tmp_path / "r.sqlite") and "--no-db" not in quick
    assert quick[quick.index("--budget") + 1] == "20"


def test_the_engine_is_passed_to_tritonforge():
    run = _load_run()
    ns = types.SimpleNamespace
    assert run.engine_flags(ns(engine="rules", llm_endpoint=None, llm_max_requests=8)) == ["--engine", "rules"]
    assert run.engine_flags(ns(engine="none", llm_endpoint="http://x", llm_max_requests=8)) == ["--engine", "none"]
    assert run.engine_flags(ns(engine="llm:m", llm_endpoint="http://127.0.0.1:9", llm_max_requests=3)) == [
        "--engine", "llm:m", "--llm-endpoint", "http://127.0.0.1:9", "--llm-max-requests", "3"]
    assert run.engine_flags(ns(engine="llm:m", llm_endpoint=None, llm_max_requests=8)) == [
        "--engine", "llm:m", "--llm-max-requests", "8"]
    assert run.engine_problem("rules") == "" and run.engine_problem("llm:gpt") == ""
    assert "expected rules, none or llm:MODEL" in run.engine_problem("llm:")
    assert "expected rules, none or llm:MODEL" in run.engine_problem("magic")

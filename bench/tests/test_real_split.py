"""The real corpus's tuning and evaluation halves (bench/benchlib/split.py, issue 35 item 6): the
split is fixed by each kernel's source blob and name (the same inputs always give the same half,
a change of file can move a kernel), each half has at least 30 kernels, bench/run --half runs
one half alone, and real.md reports the halves in separate tables with a summary line each,
the kernels not measured yet shown as such."""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from benchlib import real, report, split

BENCH = real.BENCH_DIR
MANIFEST = real.load_manifest()


def test_the_rule_is_sha256_of_salt_blob_and_name():
    blob = "10da514d80ea813b40b96ec68c2cf7f200f834ed"
    digest = hashlib.sha256(f"tritonforge.real-split/1\n{blob}\nliger_rms_norm".encode()).digest()
    assert split.half_of("liger_rms_norm", blob) == ("tuning" if digest[-1] % 2 == 0 else "evaluation")
    # Fixed values: a change of the rule (salt, order, byte) shows here.
    assert split.half_of("liger_rms_norm", blob) == "tuning"
    assert split.half_of("k1", "0" * 40) == "tuning"
    assert split.half_of("k2", "0" * 40) == "evaluation"
    assert split.half_of("k1", "3" * 40) == "evaluation"


def test_the_half_depends_on_the_file_and_on_the_name():
    # The same name on another blob, and another name on the same blob, can change halves.
    assert split.half_of("k1", "0" * 40) != split.half_of("k1", "3" * 40)
    assert split.half_of("k1", "0" * 40) != split.half_of("k2", "0" * 40)


def test_the_split_is_stable_and_independent_of_the_manifest_order():
    first = split.halves(MANIFEST)
    again = split.halves(real.load_manifest())
    assert first == again
    assert list(first) == [k.name for k in MANIFEST.kernels]
    reordered = {k.name: split.half_of(k.name, k.blob) for k in reversed(MANIFEST.kernels)}
    assert reordered == first


def test_each_half_has_at_least_30_kernels():
    halves = split.halves(MANIFEST)
    tuning = split.names_in(MANIFEST, "tuning")
    evaluation = split.names_in(MANIFEST, "evaluation")
    assert len(tuning) >= 30 and len(evaluation) >= 30, (len(tuning), len(evaluation))
    assert sorted(tuning + evaluation) == sorted(halves)
    with pytest.raises(ValueError):
        split.names_in(MANIFEST, "training")


def test_each_half_spans_several_projects_and_categories():
    for half in split.HALVES:
        kernels = [MANIFEST.kernel(n) for n in split.names_in(MANIFEST, half)]
        assert len({k.repo for k in kernels}) >= 5, half
        assert len({k.category for k in kernels}) >= 10, half


def test_bench_run_lists_and_refuses_by_half():
    run = os.path.join(BENCH, "run")
    r = subprocess.run([sys.executable, run, "--suite", "real", "--half", "evaluation", "--list"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    listed = [line.split()[0] for line in r.stdout.splitlines()]
    assert listed == split.names_in(MANIFEST, "evaluation")
    assert all(line.split()[1] == "evaluation" for line in r.stdout.splitlines())
    tuning_one = split.names_in(MANIFEST, "tuning")[0]
    r = subprocess.run([sys.executable, run, "--suite", "real", "--half", "evaluation", tuning_one],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and f"unknown kernel(s) {tuning_one} in the evaluation half" in r.stderr
    r = subprocess.run([sys.executable, run, "--half", "tuning", "--list"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--half is for --suite real" in r.stderr


def _done(name, speedup):
    case = {"case": {"T": 8}, "flops": 0, "bytes": 1e9,
            "baseline": {"status": "ok", "ms": 1.0, "verify": {"passed": True}},
            "tritonforge": {"status": "ok", "ms": 1.0 / speedup, "verify": {"passed": True}}}
    return report.derive({"name": name, "status": "done", "peak": None, "pattern": "p",
                          "tritonforge": {"status": "improved" if speedup > 1 else "unchanged", "wall_s": 30.0},
                          "cases": [case]}, {"dram_bytes_per_s": 4e12})


def test_real_md_has_one_table_per_half_with_its_summary_line():
    halves = {"a": "tuning", "b": "evaluation", "c": "tuning", "d": "evaluation", "e": "tuning"}
    kernels = {"a": _done("a", 2.0), "c": _done("c", 1.0), "b": _done("b", 1.5),
               "d": {"name": "d", "status": "error", "error": "boom"}}
    doc = {"kernels": kernels, "summary": report.real_summary(kernels), "runs": [], "args": {}}
    md = report.real_markdown(doc, halves).splitlines()
    t = md.index("## Tuning half: rules, priors and passes are developed on these kernels")
    e = md.index("## Evaluation half: held out, run to report and never to decide what tritonforge does")
    assert t < e
    tuning, evaluation = md[t:e], md[e:md.index("## What tritonforge said, per kernel")]
    assert ("- tuning half: 3 kernels, 2 measured on the GPU, 1 not measured yet; geometric-mean speed-up over "
            "the kernels as written 1.41x (over the 2 measured; a refusal counts 1.0); faster by more than 2%: "
            "1 of 2") in tuning
    assert any(line.startswith("| e | – | not measured yet |") for line in tuning)
    assert any(line.startswith("| a | T=8 |") for line in tuning)
    assert not any(line.startswith("| b ") for line in tuning)
    assert ("- evaluation half: 2 kernels, 1 measured on the GPU, 1 with an error; geometric-mean speed-up over "
            "the kernels as written 1.50x (over the 1 measured; a refusal counts 1.0); faster by more than 2%: "
            "1 of 1") in evaluation
    assert any(line.startswith("| d | – | error: boom |") for line in evaluation)
    # Without halves: one table, as before.
    assert "## Tuning half" not in "\n".join(report.real_markdown(doc).splitlines())


def test_a_half_with_nothing_measured_says_so():
    s = report.half_summary({}, ["x", "y"])
    assert s["measured"] == 0 and s["not_measured"] == ["x", "y"] and s["geomean_speedup"] is None
    assert report.half_line("evaluation", s) == \
        "evaluation half: 2 kernels, 0 measured on the GPU, 2 not measured yet; no speed-up yet"


def _results(tmp_path, kernels, sha):
    doc = {"schema": "tritonforge.bench-real/1", "runs": [{"date": "d0", "kernels": list(kernels),
                                                            "tritonforge": "tritonforge 0.1.0 (commit abc)"}],
           "kernels": kernels, "manifest_sha256": sha, "args": {}}
    (tmp_path / "real.json").write_text(json.dumps(doc))
    return doc


def test_merge_real_rewrite_and_the_per_kernel_blob_check(tmp_path):
    merge = os.path.join(BENCH, "merge_real.py")
    k = MANIFEST.kernels[0]
    into = tmp_path / "into"
    into.mkdir()
    _results(into, {k.name: _done(k.name, 1.2)}, "old")
    r = subprocess.run([sys.executable, merge, "--rewrite", "--into", str(into)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    md = (into / "real.md").read_text()
    assert md.count("| – | not measured yet |") == len(MANIFEST.kernels) - 1
    doc = json.loads((into / "real.json").read_text())
    assert set(doc["summary"]["halves"]) == {"tuning", "evaluation"}
    # A run from another manifest: merged only when it measured today's file of each kernel.
    new = tmp_path / "new"
    new.mkdir()
    k2 = MANIFEST.kernels[1]
    _results(new, {k2.name: dict(_done(k2.name, 1.1), blob="0" * 40)}, "new")
    r = subprocess.run([sys.executable, merge, str(new), "--into", str(into)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0 and f"{k2.name}: measured on blob {'0' * 40}" in r.stderr
    _results(new, {k2.name: dict(_done(k2.name, 1.1), blob=k2.blob)}, "new")
    r = subprocess.run([sys.executable, merge, str(new), "--into", str(into)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads((into / "real.json").read_text())
    assert set(doc["kernels"]) == {k.name, k2.name}
    assert doc["runs"][-1]["manifest_sha256"] == "new"
    shutil.rmtree(new)

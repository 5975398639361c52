"""The census corpus (bench/census/, docs/census.md), checked without a GPU: at least 150 files
from at least 10 public projects under licenses that allow studying the code, never
thunlp/TritonBench; bad manifests refused with one line naming the file and the key; the
layout copies the listed files at the pinned commit and refuses a file whose blob id differs;
the committed census data agree with the manifest."""

import csv
import json
import os
import subprocess
import sys

import pytest

from benchlib import census, real

CENSUS_DIR = census.CENSUS_DIR
LAYOUT = os.path.join(CENSUS_DIR, "layout.py")


def test_corpus_size_and_projects():
    repos = census.load_manifest()
    assert len(repos) >= 10
    assert sum(len(r.censused) for r in repos) >= 150
    for r in repos:
        assert r.license in real.LICENSES
        assert "tritonbench" not in r.url.lower()
        assert all(p.endswith(".py") for p, _ in r.files)


def _write(tmp_path, text):
    p = tmp_path / "manifest.toml"
    p.write_text(text)
    return str(p)


GOOD = """schema = "tritonforge.census-manifest/1"
[repos.proj]
url = "https://github.com/someone/proj"
commit = "{commit}"
license = "MIT"
files = [ {{ path = "k.py", blob = "{blob}" }} ]
"""


@pytest.mark.parametrize("text, needle", [
    (GOOD.format(commit="a" * 40, blob="b" * 40).replace("MIT", "GPL-3.0"), "'GPL-3.0' is not one of"),
    (GOOD.format(commit="a" * 12, blob="b" * 40), "key 'repos.proj.commit' must be a full 40-digit commit id"),
    (GOOD.format(commit="a" * 40, blob="b" * 40).replace("someone/proj", "thunlp/TritonBench"),
     "kept apart for independent evaluation"),
    (GOOD.format(commit="a" * 40, blob="b" * 40).replace("license", "licence"), "unknown key 'repos.proj.licence'"),
    (GOOD.format(commit="a" * 40, blob="b" * 40).replace('path = "k.py"', 'path = "../k.py"'),
     "must be a relative path inside the repository"),
])
def test_bad_manifests(tmp_path, text, needle):
    with pytest.raises(real.ManifestError) as exc:
        census.load_manifest(_write(tmp_path, text))
    assert needle in str(exc.value)
    assert "\n" not in str(exc.value)


def test_support_files_are_laid_out_but_not_censused(tmp_path):
    text = GOOD.format(commit="a" * 40, blob="b" * 40) + (
        'support = [ { path = "pkg/__init__.py", blob = "' + "c" * 40 + '" } ]\n')
    [repo] = census.load_manifest(_write(tmp_path, text))
    assert repo.files == [("k.py", "b" * 40), ("pkg/__init__.py", "c" * 40)]
    assert repo.censused == [("k.py", "b" * 40)]
    twice = text.replace('"pkg/__init__.py"', '"k.py"')
    with pytest.raises(real.ManifestError) as exc:
        census.load_manifest(_write(tmp_path, twice))
    assert "'k.py' is listed twice" in str(exc.value)


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_layout_copies_the_pinned_file_and_checks_its_blob(tmp_path):
    repo = tmp_path / "proj"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "k.py").write_text("import triton\n\n@triton.jit\ndef k(x):\n    pass\n")
    _git(repo, "add", "k.py")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    pinned = _git(repo, "rev-parse", "HEAD")
    blob = _git(repo, "rev-parse", "HEAD:k.py")
    (repo / "k.py").write_text("changed later\n")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "two")
    manifest = _write(tmp_path, GOOD.format(commit=pinned, blob=blob))
    dest = tmp_path / "src"
    r = subprocess.run([sys.executable, LAYOUT, "--manifest", manifest, "--dest", str(dest), "--git-dir",
                        f"proj={repo}", "--no-clone"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (dest / "proj" / "k.py").read_text().startswith("import triton")
    assert json.loads((dest / "LAYOUT.json").read_text())["repos"]["proj"]["files"] == ["k.py"]
    bad = _write(tmp_path, GOOD.format(commit=pinned, blob="c" * 40))
    r = subprocess.run([sys.executable, LAYOUT, "--manifest", bad, "--dest", str(dest), "--git-dir",
                        f"proj={repo}", "--no-clone"], capture_output=True, text=True)
    assert r.returncode == 1
    assert f"proj: k.py at {pinned[:12]} is blob {blob}, the manifest says {'c' * 40}" in r.stderr


@pytest.mark.parametrize("label", ["before", "after"])
def test_committed_census_agrees_with_the_manifest(label):
    before = os.path.join(CENSUS_DIR, label)
    with open(os.path.join(before, "summary.json")) as fh:
        summary = json.load(fh)
    repos = census.load_manifest()
    assert [(c["key"], c["commit"]) for c in summary["corpus"]] == [(r.key, r.commit) for r in repos]
    assert summary["files"] == sum(len(r.censused) for r in repos)
    assert not summary["failed"]
    with open(os.path.join(before, "kernels.csv")) as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == summary["kernels"]
    passes = [p["pass"] for p in summary["passes"]]
    assert set(rows[0]) >= set(passes) | {"project", "file", "kernel", "line", "autotuned"}
    assert {row["autotuned"] for row in rows} <= {"none", "configs", "computed"}
    applied = sum(1 for row in rows for p in passes if row[p] == "A")
    assert applied == summary["status"]["applied"]
    with open(os.path.join(before, "reasons.csv")) as fh:
        ids = {row["id"] for row in csv.DictReader(fh)}
    refused = [row[p] for row in rows for p in passes if row[p] != "A"]
    assert all(cell.lstrip("BC") in ids for cell in refused)
    assert sum(c["trials"] for c in summary["classes"]) == len(refused)


# (kernel, pass) trials that applied before and refuse after, each with the words its reason
# must hold: replacements at the launch alone of a value the grid or an output shape is
# computed from, which the launcher reading now refuses (docs/census.md, "Launcher reads").
NOW_REFUSED = {
    ("fla/ops/rwkv7/fused_k_update.py", "k_update_bwd_kernel_short", "retile"): "chosen by @triton.autotune",
    ("fla/ops/rwkv7/fused_k_update.py", "k_update_fwd_kernel_short", "retile"): "spans a whole dimension",
    **{("src/flag_gems/ops/vector_norm.py", f"{n}_norm_kernel_2", "retile"): "spans a whole dimension"
       for n in ("l0", "l1", "l2", "max", "min")},
}


def test_nothing_that_applied_before_refuses_after():
    """The census after the fixes applies every (kernel, pass) the census before applied, but
    the launch-only replacements listed in NOW_REFUSED, each refused for its reason."""
    def rows_of(label):
        with open(os.path.join(CENSUS_DIR, label, "kernels.csv")) as fh:
            return list(csv.DictReader(fh))

    def applied(rows):
        skip = {"project", "file", "kernel", "line"}
        return {(r["file"], r["kernel"], p) for r in rows for p, v in r.items() if p not in skip and v == "A"}
    after_rows = rows_of("after")
    before, after = applied(rows_of("before")), applied(after_rows)
    assert before - after == set(NOW_REFUSED)
    with open(os.path.join(CENSUS_DIR, "after", "reasons.csv")) as fh:
        reasons = {r["id"]: r["reason"] for r in csv.DictReader(fh)}
    by_kernel = {(r["file"], r["kernel"]): r for r in after_rows}
    for (file, kernel, pass_name), words in NOW_REFUSED.items():
        assert words in reasons[by_kernel[(file, kernel)][pass_name]], (file, kernel, pass_name)
    assert len(after) > len(before)

"""bench/ab under Triton's interpreter (no GPU): the kernel as written, variants and the vendor
verified and timed in interleaved rounds; a variant that computes something else is reported
with its reason, left out of the timing, and makes the exit status 1; bad arguments exit 2."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AB = os.path.join(BENCH, "ab")
SOURCE = os.path.join(BENCH, "kernels", "swiglu", "swiglu.py")


def ab(*args, cwd):
    env = dict(os.environ, TRITON_INTERPRET="1")
    return subprocess.run([sys.executable, AB, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_variants_are_verified_then_timed_in_rounds(tmp_path):
    text = open(SOURCE).read()
    same = tmp_path / "same.py"
    same.write_text(text)
    # A planted fault: the launcher's output shifted by one (far outside the task's tolerance).
    wrong = tmp_path / "wrong.py"
    launcher = "swiglu"
    wrong.write_text(text + f"\n\n_original = {launcher}\n\n\ndef {launcher}(*args):\n    return _original(*args) + 1\n")
    out = tmp_path / "ab.json"
    proc = ab("swiglu", str(same), str(wrong), "--case", "M=4,N=64", "--rounds", "2", "--timing-ms", "1",
              "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "wrong.py" in proc.stdout and "wrong result" in proc.stdout, proc.stdout
    rows = {r["label"]: r for r in json.loads(out.read_text())["results"][0]["rows"]}
    assert len(rows["as written"]["round_ms"]) == 2 and len(rows["same.py"]["round_ms"]) == 2
    assert rows["same.py"]["speedup"] > 0 and "error" not in rows["same.py"]
    assert "round_ms" not in rows["wrong.py"] and rows["wrong.py"]["error"].startswith("wrong result")
    assert any(label.startswith("vendor") for label in rows)


@pytest.mark.parametrize("args, message", [
    (["no_such_kernel"], "no kernel 'no_such_kernel'"),
    (["swiglu", "missing.py"], "missing.py: no such file"),
    (["swiglu", "--case", "M"], "--case: 'M' is not NAME=VALUE"),
    (["swiglu", "--rounds", "0"], "--rounds must be at least 1"),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, args, message):
    proc = ab(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr

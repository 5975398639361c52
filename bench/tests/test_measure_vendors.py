"""The vendor column when a harness offers several implementations (vendors(), e.g. SDPA's
backends): bench/run's measurement times each one alike, keeps them all under "vendors" and
compares the fastest verified one, whose record carries its name; a backend that fails, or
computes something else, is recorded and does not stop the others. Run on the CPU under
TRITON_INTERPRET=1 with a kernel written in torch (no GPU)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
REPO = os.path.dirname(BENCH)

SOURCE = textwrap.dedent('''
    def scale(x):
        return x * 2.0
''')

AUTOTUNE = textwrap.dedent('''
    def make_launcher(mod, autotune, configs):
        return mod.scale
''')

HARNESS = textwrap.dedent('''
    import time

    import torch

    DEVICE = "cpu"
    PEAK = None
    VENDOR = "torch"
    SMALL_CASE = {"N": 64}

    def make_inputs(case, seed):
        g = torch.Generator().manual_seed(seed)
        return (torch.randn(case["N"], generator=g),)

    def reference(x):
        return x * 2.0

    def vendor(x):
        return x * 2.0

    def _broken(x):
        raise RuntimeError("No available kernel. Aborting execution.")

    def _slow(x):
        time.sleep(0.05)
        return x * 2.0

    def _fast(x):
        time.sleep(0.01)
        return x + x

    def _wrong(x):          # the quickest, but not what the reference computes
        return x * 3.0

    def vendors():
        return {"broken": _broken, "slow": _slow, "wrong": _wrong, "fast": _fast}

    def flops(case):
        return 0

    def bytes(case):
        return 8 * case["N"]
''')

RUN = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from benchlib import measure
    print(json.dumps(measure.op_measure(json.loads(sys.argv[2])), default=str))
''')


def _measure(tmp_path, harness, small=True):
    (tmp_path / "scale.py").write_text(SOURCE)
    (tmp_path / "scale_autotune.py").write_text(AUTOTUNE)
    (tmp_path / "harness.py").write_text(harness)
    spec = {"name": "scale", "source": str(tmp_path / "scale.py"), "harness": str(tmp_path / "harness.py"),
            "launcher": "scale", "autotune": str(tmp_path / "scale_autotune.py"), "cases": [{"N": 64}],
            "rtol": 1e-6, "atol": 1e-6, "reference_precision": "float64"}
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([sys.executable, "-c", RUN, BENCH, json.dumps({"spec": spec, "small": small})],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    (case,) = json.loads(r.stdout.strip().splitlines()[-1])["cases"]
    return case


def test_the_fastest_verified_backend_is_the_vendor_and_all_are_kept(tmp_path):
    case = _measure(tmp_path, HARNESS)
    vendors = case["vendors"]
    assert list(vendors) == ["broken", "slow", "wrong", "fast"]
    assert vendors["broken"]["status"] == "error" and "No available kernel" in vendors["broken"]["message"]
    assert vendors["slow"]["verify"]["passed"] and vendors["fast"]["verify"]["passed"]
    assert not vendors["wrong"]["verify"]["passed"]
    assert vendors["fast"]["ms"] < vendors["slow"]["ms"]
    assert case["vendor"]["name"] == "fast"
    assert case["vendor"]["ms"] == vendors["fast"]["ms"]
    assert case["baseline"]["verify"]["passed"]


def test_when_no_backend_verifies_the_first_is_the_vendor(tmp_path):
    harness = HARNESS.replace('return {"broken": _broken, "slow": _slow, "wrong": _wrong, "fast": _fast}',
                              'return {"broken": _broken, "wrong": _wrong}')
    case = _measure(tmp_path, harness)
    assert list(case["vendors"]) == ["broken", "wrong"]
    assert case["vendor"]["name"] == "broken" and case["vendor"]["status"] == "error"


def test_a_harness_without_vendors_measures_vendor_as_before(tmp_path):
    harness = HARNESS.replace("def vendors():", "def _unused_vendors():")
    case = _measure(tmp_path, harness)
    assert "vendors" not in case
    assert "name" not in case["vendor"]
    assert case["vendor"]["status"] == "ok" and case["vendor"]["verify"]["passed"]


def test_fastest_vendor_breaks_ties_by_order():
    sys.path.insert(0, BENCH)
    from benchlib import measure
    ok = {"status": "ok", "ms": 1.0, "verify": {"passed": True}}
    recs = {"a": dict(ok, ms=2.0), "b": dict(ok), "c": dict(ok), "d": {"status": "error", "message": "x"}}
    assert measure.fastest_vendor(recs)["name"] == "b"
    assert measure.fastest_vendor({"d": recs["d"]}) == {"status": "error", "message": "x", "name": "d"}


MEASURE_SUITE = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from benchlib import interpreter_fixes
    interpreter_fixes.apply()
    from benchlib import measure, suite
    spec = suite.load_spec(sys.argv[2]).to_request()
    print(json.dumps(measure.op_measure({"spec": spec, "small": True}), default=str))
''')


@pytest.mark.parametrize("name", ["attention_gqa", "attention_causal"])
def test_sdpa_harnesses_measure_in_the_interpreter(name):
    # Off the GPU, vendors() offers SDPA's default call alone: the interpreter path still runs.
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([sys.executable, "-c", MEASURE_SUITE, BENCH, name],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    (case,) = json.loads(r.stdout.strip().splitlines()[-1])["cases"]
    for key in ("autotune", "baseline", "vendor"):
        assert case[key]["status"] == "ok", case[key]
        assert case[key]["verify"]["passed"], (key, case[key]["verify"])
    assert len(case["vendors"]) == 1 and case["vendor"]["name"] == next(iter(case["vendors"]))

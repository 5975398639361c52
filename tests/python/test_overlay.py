"""`tritonforge run --overlay`: a captured program run with tuned kernels, on the CPU under
Triton's interpreter. The optimize results are written here by hand (the search needs a GPU):
a tuned launch (add_kernel's BLOCK 256 -> 512), a tuned autotune configuration (scale_kernel's),
and a planted fault, so that what is served, where, and what --compare catches are all seen."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from capture_cli import BINARY, ROOT, capture_copy, tool

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not BINARY.exists(), reason=f"{BINARY} not built")


def tuned(cap, task, old, new):
    """An optimize result for `task` whose source is the task's with `old` replaced by `new`."""
    source = cap / "tasks" / task / "kernels_program.py"
    text = source.read_text()
    assert old in text
    out = cap / "optimized" / task
    out.mkdir(parents=True, exist_ok=True)
    (out / source.name).write_text(text.replace(old, new))
    (out / "result.json").write_text(json.dumps({"status": "improved", "speedup": 1.5,
                                                 "outputs": {"source": str(out / source.name)}}))


@pytest.fixture
def captured(tmp_path):
    return capture_copy(tmp_path)


def compare_dir(cap):
    found = sorted((cap / "compare").iterdir())
    assert found
    return found[-1]


def test_tuned_launches_are_served_for_captured_launches_only(captured):
    where, cap = captured
    tuned(cap, "add_kernel", "    BLOCK = 256\n", "    BLOCK = 512\n")
    tuned(cap, "scale_kernel", 'triton.Config({"BLOCK": 128}, num_warps=2)', 'triton.Config({"BLOCK": 256}, num_warps=4)')
    (cap / "optimized" / "shift_kernel").mkdir(parents=True)
    (cap / "optimized" / "shift_kernel" / "result.json").write_text('{"status": "unchanged"}')
    # Three sizes: the third was never captured, so it runs as the program wrote it.
    proc = tool("run", "--overlay", "cap", "--compare", "--", sys.executable, "kernels_program.py", "3", cwd=where)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "serving add_kernel" in proc.stderr and "serving scale_kernel" in proc.stderr
    assert "not serving shift_kernel: the search found nothing faster" in proc.stderr
    assert "outputs: the same" in proc.stdout
    result = json.loads((compare_dir(cap) / "compare.json").read_text())
    assert result["outputs"]["same"] and result["outputs"]["values"] == 1
    served = json.loads(next((compare_dir(cap) / "overlay-served").glob("*.json")).read_text())
    counts = {k["kernel"]: (k["served"], k["as_written"]) for k in served["kernels"]}
    assert counts == {"add_kernel": (4, 2), "scale_kernel": (2, 1)}
    # The overlaid run's record: add_kernel launched from the tuned copy with BLOCK 512 (grid 2 for
    # n = 1000), and as written (BLOCK 256) for the size that was not captured.
    record = json.loads(next((compare_dir(cap) / "overlay" / "launches").glob("*.json")).read_text())
    adds = [k for k in record["kernels"] if k["name"] == "add_kernel"]
    tuned_copy = [k for k in adds if "/overlay/" in k["file"]]
    assert len(tuned_copy) == 1 and {tuple(s["grid"]) for s in tuned_copy[0]["signatures"]} == {(2, 1, 1), (4, 1, 1)}
    as_written = [k for k in adds if k["file"] == str(where / "kernels_program.py")]
    assert [s["args"]["n"]["value"] for s in as_written[0]["signatures"]] == [3000]
    # The launch-only change has no patch; the changed decorator has one, against the file's own name.
    assert not list((cap / "overlay" / "add_kernel").glob("*.patch"))
    patch = (cap / "overlay" / "scale_kernel" / "kernels_program.py.patch").read_text()
    assert patch.startswith("--- a/kernels_program.py") and '+@triton.autotune(configs=[triton.Config({"BLOCK": 256}' in patch
    check = subprocess.run(["patch", "-p1", "--dry-run", "-d", str(where), "-i", str(cap / "overlay" / "scale_kernel" /
                                                                               "kernels_program.py.patch")],
                           capture_output=True, text=True) if shutil.which("patch") else None
    assert check is None or check.returncode == 0, check.stdout + check.stderr


def test_compare_catches_a_tuned_kernel_that_computes_something_else(captured):
    where, cap = captured
    # A planted fault: the tuned copy adds one more.
    tuned(cap, "add_kernel", "tl.load(y_ptr + offs, mask=m), mask=m)", "tl.load(y_ptr + offs, mask=m) + 1.0, mask=m)")
    proc = tool("run", "--overlay", "cap", "--compare", "--", sys.executable, "kernels_program.py", "2", cwd=where)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "outputs: DIFFERENT" in proc.stdout
    assert not json.loads((compare_dir(cap) / "compare.json").read_text())["outputs"]["same"]


def test_a_source_file_changed_since_the_capture_runs_as_written(captured):
    where, cap = captured
    tuned(cap, "add_kernel", "tl.load(y_ptr + offs, mask=m), mask=m)", "tl.load(y_ptr + offs, mask=m) + 1.0, mask=m)")
    program = where / "kernels_program.py"
    program.write_text(program.read_text() + "\n# edited after the capture\n")
    proc = tool("run", "--overlay", "cap", "--", sys.executable, "kernels_program.py", "2", cwd=where)
    assert proc.returncode == 0, proc.stderr
    assert "changed since the capture" in proc.stderr
    assert "total 10021000.0" in proc.stdout  # the faulty tuned copy was not served


def test_the_python_api_serves_inside_a_block(captured):
    """tritonforge.overlay(folder): the tuned kernels inside one block of a program."""
    where, cap = captured
    tuned(cap, "add_kernel", "    BLOCK = 256\n", "    BLOCK = 512\n")
    proc = tool("run", "--overlay", "cap", "--", sys.executable, "kernels_program.py", "1", cwd=where)
    assert proc.returncode == 0, proc.stderr
    script = f"""
import sys, torch
sys.path.insert(0, {str(where)!r})
import kernels_program as p
import tritonforge
with tritonforge.overlay({str(cap)!r}) as ov:
    x = torch.arange(1000, dtype=torch.float32); y = torch.ones(1000)
    assert torch.equal(p.add(x, y), x + y)
    assert [(e.served, e.as_written) for e in ov.entries.values()] == [(1, 0)]
from triton.runtime.jit import JITFunction
assert not hasattr(JITFunction.run, "__wrapped__")  # the patch is undone
print("ok")
"""
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run([sys.executable, "-c", script], cwd=where, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


@pytest.mark.parametrize("args, message", [
    (["run", "--overlay", "nowhere", "--", "python3", "-c", "pass"], "nowhere: not a folder"),
    (["run", "--overlay", "."], "no program given"),
    (["run", "--", "python3", "-c", "pass"], "give --overlay DIR"),
    (["run", "--overlay", ".", "--rtol", "0.1", "--", "python3", "-c", "pass"], "go with --compare"),
    (["run", "--overlay", ".", "--", "python3", "-c", "pass"], "no replay tasks"),
    (["run", "--overlay", ".", "--compare", "--lines", "(", "--", "python3", "-c", "pass"], "not a regular expression"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    proc = tool(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_kernel_under_an_autotuner_subclass_is_found(tmp_path):
    """fla wraps its kernels in heuristics over its own Autotuner subclass (CachedAutotuner, with
    its own run): the overlay must still find the kernel under them (it did not: no launch of
    fla's causal_conv1d_bwd_kernel was served on the GPU, 2026-12-06)."""
    module = tmp_path / "subclassed.py"
    module.write_text('''
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner


class CachedAutotuner(Autotuner):
    def run(self, *args, **kwargs):
        return super().run(*args, **kwargs)


def cached_autotune(**kw):
    def wrap(fn):
        tuner = triton.autotune(**kw)(fn)
        tuner.__class__ = CachedAutotuner
        return tuner
    return wrap


@triton.heuristics({"EVEN": lambda args: args["n"] % 2 == 0})
@cached_autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def twice_kernel(x_ptr, n, EVEN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
''')
    import hashlib
    manifest = tmp_path / "overlay.json"
    manifest.write_text(json.dumps({"kernels": [{
        "kernel": "twice_kernel", "source": str(module), "source_sha256": hashlib.sha256(module.read_bytes()).hexdigest(),
        "tuned": "unused.py", "launcher": "tritonforge_replay", "inputs": ["x_ptr", "n"], "through_wrapper": True,
        "cases": []}]}))
    script = f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
import subclassed
from tritonforge_worker.capture.overlay import Overlay
ov = Overlay({str(manifest)!r})
outer = subclassed.twice_kernel
assert type(outer.fn).__name__ == "CachedAutotuner"
assert ov.entry_for(outer, True) is not None
assert ov.entry_for(outer.fn, True) is not None
assert ov.entry_for(outer.fn.fn, False) is None  # served at the wrapper, as captured
print("ok")
"""
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout + out.stderr


def test_a_served_launch_returns_what_the_tuned_launch_returned(monkeypatch):
    """Triton's launch returns the compiled kernel (programs read .n_regs, .asm from it): a
    served launch returns the one its tuned launcher's launch returned, not None."""
    from tritonforge_worker.capture import overlay as served

    class Kernel:
        def __init__(self, name):
            self.name = name

    original, tuned = Kernel("as-written"), Kernel("tuned")
    run = served._serving_run(lambda self, *a, **k: f"compiled {self.name}", None)

    class Overlay:
        def entry_for(self, obj, wrapper):
            return "entry" if obj is original else None

        def serve(self, entry, obj, args, kwargs):
            return lambda: run(tuned, *args)

    monkeypatch.setattr(served, "_ACTIVE", Overlay())
    assert run(original, 1, 2) == "compiled tuned"
    assert run(tuned) == "compiled tuned"
    monkeypatch.setattr(served, "_ACTIVE", None)
    assert run(original) == "compiled as-written"

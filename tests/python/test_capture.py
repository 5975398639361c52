"""The capture recorder (python/tritonforge_worker/capture/) on a real program, run on the CPU
under Triton's interpreter: what it records of each launch, what it saves for replay, how it
stays out of the program's way (its sitecustomize chains the one it shadows, the patches are
undone), and the binary's `capture` command over it."""

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "python" / "capture_programs" / "kernels_program.py"
BOOT = ROOT / "python" / "tritonforge_worker" / "capture" / "boot"
BINARY = Path(os.environ.get("TRITONFORGE_BINARY", ROOT / "build" / "tritonforge"))

torch = pytest.importorskip("torch")


def run_captured(tmp_path, *args, options=None, extra_path=None):
    out = tmp_path / "cap"
    env = dict(os.environ, TRITON_INTERPRET="1", TRITONFORGE_CAPTURE_DIR=str(out),
               PYTHONPATH=os.pathsep.join([str(BOOT), str(ROOT / "python")] + ([str(extra_path)] if extra_path else [])))
    if options:
        env["TRITONFORGE_CAPTURE_OPTIONS"] = options
    proc = subprocess.run([sys.executable, str(PROGRAM), *args], env=env, capture_output=True, text=True, timeout=300)
    files = glob.glob(str(out / "launches" / "*.json"))
    record = json.loads(Path(files[0]).read_text()) if files else None
    return proc, record, out


def kernel(record, name):
    found = [k for k in record["kernels"] if k["name"] == name]
    assert found, f"{name} not recorded: {[k['name'] for k in record['kernels']]}"
    return found[0]


def test_each_launch_is_recorded_with_its_arguments_grid_and_caller(tmp_path):
    proc, record, _ = run_captured(tmp_path)
    assert proc.returncode == 0, proc.stderr
    add = kernel(record, "add_kernel")
    assert add["file"] == str(PROGRAM) and add["tunable"] and add["via"] == ["jit"]
    assert add["launches"] == 4 and len(add["signatures"]) == 2
    first = add["signatures"][0]
    assert first["launches"] == 2 and first["grid"] == [4, 1, 1]
    assert first["args"]["n"] == {"kind": "int", "value": 1000}
    assert first["args"]["BLOCK"] == {"kind": "int", "value": 256}
    x = first["args"]["x_ptr"]
    assert (x["kind"], x["dtype"], x["shape"], x["stride"]) == ("tensor", "float32", [1000], [1])
    assert first["called_from"].startswith(f"{PROGRAM}:") and first["called_from"].endswith(" in add")
    assert record["timing"] == "wall" and first["time_ms"] > 0


def test_what_an_autotuner_or_a_heuristic_chose_is_the_launch_configuration(tmp_path):
    _, record, _ = run_captured(tmp_path)
    scale = kernel(record, "scale_kernel")
    assert scale["via"] == ["autotuner"]
    sig = scale["signatures"][0]
    assert sig["config"]["BLOCK"]["value"] == 128 and sig["config"]["num_warps"]["value"] == 2
    assert "BLOCK" not in sig["args"] or sig["args"]["BLOCK"]["value"] == 128
    assert sig["grid"] == [8, 1, 1]  # the grid function evaluated with the configuration's BLOCK
    shift = kernel(record, "shift_kernel")
    assert shift["via"] == ["heuristics"]
    assert [s["config"]["BLOCK"]["value"] for s in shift["signatures"]] == [64, 256]


def load_span(out, digest):
    return np.frombuffer((out / "data" / f"{digest}.bin").read_bytes(), dtype=np.float32)


def test_saved_tensors_replay_the_launch_and_views_share_their_storage(tmp_path):
    _, record, out = run_captured(tmp_path)
    add = kernel(record, "add_kernel")["signatures"][0]["snapshot"]
    spans = add["spans"]
    # x and y are read only: no "after"; out is written: its "after" is x + y.
    x_span, y_span, out_span = (spans[add["tensors"][name]["span"]] for name in ("x_ptr", "y_ptr", "out_ptr"))
    assert x_span["after"] is None and y_span["after"] is None and out_span["after"] is not None
    np.testing.assert_array_equal(load_span(out, out_span["after"]),
                                  load_span(out, x_span["before"]) + load_span(out, y_span["before"]))
    # shift_kernel reads buf[:n] and writes buf[n:]: one span, the destination at byte 4n.
    assert kernel(record, "shift_kernel")["file"] == str(PROGRAM.parent / "kernelpkg" / "ops.py")
    shift = kernel(record, "shift_kernel")["signatures"][0]["snapshot"]
    assert len(shift["spans"]) == 1
    assert shift["tensors"]["src_ptr"] == {"span": 0, "byte_offset": 0}
    assert shift["tensors"]["dst_ptr"] == {"span": 0, "byte_offset": 4000}
    before, after = load_span(out, shift["spans"][0]["before"]), load_span(out, shift["spans"][0]["after"])
    np.testing.assert_array_equal(after[1000:], before[:1000] + 1.0)
    np.testing.assert_array_equal(after[:1000], before[:1000])


def test_a_quota_or_a_per_kernel_limit_stops_the_saving_and_says_so(tmp_path):
    _, record, out = run_captured(tmp_path, "3", options="save=1,quota_mb=0,per_kernel=3")
    sig = kernel(record, "add_kernel")["signatures"][0]
    assert sig["snapshot"] is None and "quota" in sig["snapshot_skipped"]
    assert not (out / "data").exists()
    _, record, _ = run_captured(tmp_path / "b", "3", options="per_kernel=1")
    sigs = kernel(record, "add_kernel")["signatures"]
    assert sigs[0]["snapshot"] is not None
    assert [s["snapshot"] for s in sigs[1:]] == [None, None]
    assert "1 launches of this kernel are saved already" in sigs[1]["snapshot_skipped"]


def test_a_failing_program_keeps_what_it_launched(tmp_path):
    proc, record, _ = run_captured(tmp_path, "1", "fail")
    assert proc.returncode != 0
    assert kernel(record, "add_kernel")["launches"] == 2


def test_the_sitecustomize_it_shadows_still_runs(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import os\nos.environ['THEIRS_RAN'] = '1'\nprint('theirs ran')\n")
    proc, record, _ = run_captured(tmp_path, "1", extra_path=theirs)
    assert proc.returncode == 0, proc.stderr
    assert "theirs ran" in proc.stdout and record is not None


def test_the_context_manager_records_only_inside_and_undoes_its_patches(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    code = f"""
import sys, json, glob
sys.path[:0] = [{str(ROOT / 'python')!r}, {str(PROGRAM.parent)!r}]
from triton.runtime.interpreter import InterpretedFunction
before = InterpretedFunction.run
import kernels_program as p
import torch
from tritonforge_worker.capture import capture
x = torch.ones(100)
p.add(x, x)
with capture({str(tmp_path / 'ctx')!r}) as rec:
    assert InterpretedFunction.run is not before
    p.add(x, x)
p.add(x, x)
assert InterpretedFunction.run is before
rec_file = glob.glob({str(tmp_path / 'ctx' / 'launches' / '*.json')!r})[0]
print(json.load(open(rec_file))['kernels'][0]['launches'])
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "1"


@pytest.mark.skipif(not BINARY.exists(), reason="needs the binary (build/tritonforge)")
def test_the_capture_command_runs_the_program_and_ranks_its_kernels(tmp_path):
    env = dict(os.environ, TRITON_INTERPRET="1", TRITONFORGE_WORKER_DIR=str(ROOT / "python"))
    out = tmp_path / "run"
    proc = subprocess.run([str(BINARY), "capture", "-o", str(out), "--", sys.executable, str(PROGRAM), "2"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "total " in proc.stdout and "add_kernel" in proc.stdout  # the program's own output, relayed
    summary = json.loads((out / "capture.json").read_text())
    names = [k["name"] for k in summary["kernels"]]
    assert sorted(names) == ["add_kernel", "scale_kernel", "shift_kernel"]
    assert summary["program"]["ok"] and summary["timing"] == "wall"
    times = [k["time_ms"] for k in summary["kernels"]]
    assert times == sorted(times, reverse=True)
    # The table in report.html too, with the replay tasks.
    html = (out / "report.html").read_text()
    assert "<code>add_kernel</code>" in html and "Replay tasks" in html and "could not be rendered" not in html
    # The same folder again: refused, nothing overwritten.
    again = subprocess.run([str(BINARY), "capture", "-o", str(out), "--", sys.executable, str(PROGRAM)], env=env,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "is not empty" in again.stderr
    shown = subprocess.run([str(BINARY), "capture", "--show", str(out), "--rows", "1"], env=env, capture_output=True,
                           text=True, timeout=60)
    assert shown.returncode == 0 and "(2 more kernels" in shown.stdout


@pytest.mark.skipif(not BINARY.exists(), reason="needs the binary (build/tritonforge)")
def test_a_failing_program_is_exit_1_and_its_launches_are_shown(tmp_path):
    env = dict(os.environ, TRITON_INTERPRET="1", TRITONFORGE_WORKER_DIR=str(ROOT / "python"))
    proc = subprocess.run([str(BINARY), "capture", "-o", str(tmp_path / "f"), "--", sys.executable, str(PROGRAM), "1",
                           "fail"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert "failed (exit code 1)" in proc.stderr and "what it launched before is recorded" in proc.stderr
    assert "add_kernel" in proc.stdout


def load_module_from_path(*args):
    sys.path.insert(0, str(ROOT / "python"))
    from tritonforge_worker.modules import load_module_from_path as load
    return load(*[str(a) if isinstance(a, Path) else a for a in args])


def load_task_module(path, name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not BINARY.exists(), reason="needs the binary (build/tritonforge)")
def test_the_replay_tasks_reproduce_each_recorded_launch(tmp_path, monkeypatch):
    """Each written task, replayed under the interpreter: its launcher on make_inputs leaves the
    in-place outputs equal to expected(); a changed recorded output is caught."""
    tomllib = pytest.importorskip("tomllib")
    env = dict(os.environ, TRITON_INTERPRET="1", TRITONFORGE_WORKER_DIR=str(ROOT / "python"))
    out = tmp_path / "run"
    proc = subprocess.run([str(BINARY), "capture", "-o", str(out), "--", sys.executable, str(PROGRAM), "2"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "capture.json").read_text())
    written = {t["kernel"]: t for t in summary["tasks"]}
    assert sorted(written) == ["add_kernel", "scale_kernel", "shift_kernel"]
    monkeypatch.setenv("TRITONFORGE_REPLAY_DEVICE", "cpu")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    for kernel, t in written.items():
        task_path = Path(t["task"])
        task = tomllib.loads(task_path.read_text())
        assert task["launcher"] == "tritonforge_replay" and task["kernels"] == [kernel]
        assert task["check"]["reference_precision"] == "as-is" and len(task["cases"]) == 2
        if kernel == "shift_kernel":  # its module imports a sibling: the copy is loaded inside the package
            assert task["package"] == "kernelpkg" and task["package_root"] == str(PROGRAM.parent)
        else:  # the program's own module: its folder is on the search path, for `import kernelpkg`
            assert task["search_path"] == [str(PROGRAM.parent)]
        source = load_module_from_path(task_path.parent / task["source"], f"replayed_{kernel}",
                                       [task.get("package_root", "")] + task.get("search_path", []), task.get("package"))
        harness = load_task_module(task_path.parent / task["harness"], f"harness_{kernel}")
        for case in task["cases"]:
            inputs = harness.make_inputs(case, 0)
            assert getattr(source, task["launcher"])(*inputs) is None  # outputs are in place
            got = [inputs[i] for i in task["check"]["in_place"]]
            want = harness.expected(case, 0)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                torch.testing.assert_close(g, w, rtol=0, atol=0)
    # The launcher the add_kernel task got: BLOCK bound at the launch, where the search tunes it.
    add = (Path(written["add_kernel"]["task"]).parent / "kernels_program.py").read_text()
    assert "    BLOCK = 256\n    add_kernel[(triton.cdiv(n, BLOCK),)](x_ptr, y_ptr, out_ptr, n, BLOCK=BLOCK)\n" in add
    # A planted fault: the recorded output of the first case changed by one element.
    replay_path = Path(written["add_kernel"]["task"]).parent / "replay.json"
    replay = json.loads(replay_path.read_text())
    span = replay["cases"][0]["spans"][replay["cases"][0]["tensors"]["out_ptr"]["span"]]
    data = bytearray((out / "data" / f"{span['after']}.bin").read_bytes())
    data[0:4] = np.float32(-7.0).tobytes()
    (out / "data" / "planted.bin").write_bytes(bytes(data))
    span["after"] = "planted"
    replay_path.write_text(json.dumps(replay))
    harness = load_task_module(replay_path.parent / "harness.py", "harness_planted")
    source = load_module_from_path(replay_path.parent / "kernels_program.py", "replayed_planted", [str(PROGRAM.parent)])
    inputs = harness.make_inputs({"launch": 0}, 0)
    source.tritonforge_replay(*inputs)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(inputs[2], harness.expected({"launch": 0}, 0)[0], rtol=0, atol=0)


@pytest.mark.skipif(not BINARY.exists(), reason="needs the binary (build/tritonforge)")
def test_optimize_without_a_gpu_keeps_the_tasks_and_exits_3(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: --optimize would run the search")
    env = dict(os.environ, TRITON_INTERPRET="1", TRITONFORGE_WORKER_DIR=str(ROOT / "python"),
               TRITONFORGE_PYTHON=sys.executable)
    out = tmp_path / "run"
    proc = subprocess.run([str(BINARY), "capture", "-o", str(out), "--top", "1", "--optimize", "--budget", "5", "--",
                           sys.executable, str(PROGRAM), "1"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "No CUDA GPU" in proc.stdout + proc.stderr
    summary = json.loads((out / "capture.json").read_text())
    assert len(summary["tasks"]) == 1 and Path(summary["tasks"][0]["task"]).exists()
    replay = json.loads((Path(summary["tasks"][0]["task"]).parent / "replay.json").read_text())
    assert len(replay["source_sha256"]) == 64

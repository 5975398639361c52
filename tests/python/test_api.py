"""The Python API (python/tritonforge) over the checkout's binary (build/tritonforge), on the
CPU: typed exceptions for each exit code, structured results, tasks built in Python written
as task files the binary accepts, and the launcher behind `tritonforge` / `python -m`."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import tritonforge  # noqa: E402
from tritonforge import task as task_module  # noqa: E402
from tritonforge._launcher import binary_path, child_environment  # noqa: E402

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None

if not (ROOT / "build" / "tritonforge").exists() and not os.environ.get("TRITONFORGE_BINARY"):
    pytest.skip("build/tritonforge is not built (scripts/setup.sh)", allow_module_level=True)


def _gpu_visible():
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _toml(path):
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    return tomllib.loads(Path(path).read_text())


# ---------------------------------------------------------------------------------------------
# exit codes -> exceptions


def test_a_missing_task_file_is_bad_input(tmp_path):
    with pytest.raises(tritonforge.BadInputError) as e:
        tritonforge.optimize(tmp_path / "nothere" / "task.toml", out=tmp_path / "out", progress=False)
    assert e.value.returncode == 2
    assert str(e.value) == f"{tmp_path}/nothere/task.toml: task file not found"
    assert isinstance(e.value, ValueError)
    assert not (tmp_path / "out").exists()


def test_a_bad_task_key_is_bad_input_naming_the_key(tmp_path):
    src = ROOT / "examples" / "softmax"
    for f in src.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    text = (tmp_path / "task.toml").read_text().replace("rtol = 1e-4", "rtoll = 1e-4")
    (tmp_path / "task.toml").write_text(text)
    with pytest.raises(tritonforge.BadInputError, match=r"unknown key 'check.rtoll'"):
        tritonforge.optimize(tmp_path / "task.toml", out=tmp_path / "out", progress=False)


def test_a_syntax_error_in_the_source_is_bad_input(tmp_path):
    bad = tmp_path / "k.py"
    bad.write_text("import triton\n\ndef broken(:\n    pass\n")
    with pytest.raises(tritonforge.BadInputError, match=r"k.py:3:12: syntax error"):
        tritonforge.analyze(bad, progress=False)


def test_a_bad_flag_value_is_bad_input():
    with pytest.raises(tritonforge.BadInputError, match="--budget"):
        tritonforge.optimize(ROOT / "examples" / "matmul" / "task.toml", budget=-1, progress=False)


def test_a_worker_python_that_does_not_exist_is_an_environment_failure(tmp_path):
    with pytest.raises(tritonforge.EnvironmentFailedError) as e:
        tritonforge.analyze(ROOT / "examples" / "matmul" / "matmul.py", python=tmp_path / "no-python",
                            progress=False)
    assert e.value.returncode == 1
    assert "no-python" in str(e.value)


@pytest.mark.skipif(_gpu_visible(), reason="a GPU is visible: this test is for machines without one")
def test_optimize_without_a_gpu_raises_no_gpu_with_the_compile_checks(tmp_path):
    lines = []
    with pytest.raises(tritonforge.NoGpuError) as e:
        tritonforge.optimize(ROOT / "examples" / "matmul" / "task.toml", out=tmp_path, db=False,
                             progress=lines.append)
    err = e.value
    assert err.returncode == 3
    assert str(err).startswith("no CUDA GPU (")
    result = err.result
    assert isinstance(result, tritonforge.OptimizeResult)
    assert result.status == "no-gpu" and not result.improved
    assert result.result_path == tmp_path / "matmul" / "result.json"
    assert json.loads(result.result_path.read_text()) == result.data
    assert result.report_path.is_file()
    assert "<h1>tritonforge: matmul</h1>" in result.html_path.read_text()
    assert result.source is None and result.cases == ()
    assert result.version == tritonforge.__version__
    assert result.commit == tritonforge.version()["commit"]
    assert [c["kernel"] for c in result.compile_checks] == ["matmul_kernel"]
    # The progress went to the callback, line by line, and nothing to the JSON.
    assert "Tunables:" in lines
    assert all("\n" not in line for line in lines)


def test_progress_goes_to_stderr_by_default(capfd, tmp_path):
    with pytest.raises(tritonforge.BadInputError):
        tritonforge.optimize(tmp_path / "task.toml")
    err = capfd.readouterr().err
    assert f"tritonforge: {tmp_path}/task.toml: task file not found" in err


def test_an_exception_in_the_progress_callback_reaches_the_caller(tmp_path):
    def broken(line):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        tritonforge.analyze(tmp_path / "missing.py", progress=broken)


# ---------------------------------------------------------------------------------------------
# structured results


def test_analyze_returns_the_json_of_the_command():
    facts = tritonforge.analyze(ROOT / "examples" / "matmul" / "matmul.py", progress=False)
    kernels = facts["kernels"]
    assert [k["name"] for k in kernels] == ["matmul_kernel"]
    cli = subprocess.run([str(binary_path()), "analyze", str(ROOT / "examples" / "matmul" / "matmul.py"), "--json"],
                         capture_output=True, text=True, env=child_environment(), check=True)
    assert json.loads(cli.stdout) == facts


def test_optimize_result_mirrors_result_json(tmp_path):
    # A result.json as a GPU run writes it (docs/result-schema.md), read into the object.
    (tmp_path / "k.py").write_text("optimized\n")
    (tmp_path / "changes.diff").write_text("--- a\n+++ b\n")
    data = {
        "schema": "tritonforge.optimize/1",
        "tool": {"name": "tritonforge", "version": "0.1.0", "commit": "abc1234", "worker_protocol": 1},
        "status": "improved",
        "speedup": 2.0,
        "baseline": {"per_case": [{"case": {"N": 1}, "label": "N=1", "status": "ok", "time_ms": 4.0},
                                  {"case": {"N": 2}, "label": "N=2", "status": "ok", "time_ms": 8.0}]},
        "best": {"id": 7, "config": {"k.BLOCK": 128}, "config_text": "BLOCK=128",
                 "per_case": [{"case": {"N": 1}, "label": "N=1", "status": "ok", "time_ms": 2.0, "speedup": 2.0},
                              {"case": {"N": 2}, "label": "N=2", "status": "ok", "time_ms": 4.0, "speedup": 2.0}]},
        "outputs": {"dir": str(tmp_path), "source": str(tmp_path / "k.py"), "diff": str(tmp_path / "changes.diff"),
                    "result": str(tmp_path / "result.json"), "report": str(tmp_path / "report.md"),
                    "html": str(tmp_path / "report.html")},
    }
    r = tritonforge.OptimizeResult.from_json(data)
    assert r.improved and r.speedup == 2.0
    assert r.best_config == {"k.BLOCK": 128} and r.best_config_text == "BLOCK=128"
    assert [(c.label, c.baseline_ms, c.best_ms, c.speedup) for c in r.cases] == [("N=1", 4.0, 2.0, 2.0),
                                                                                ("N=2", 8.0, 4.0, 2.0)]
    assert r.source == "optimized\n" and r.diff == "--- a\n+++ b\n"
    assert r.report_path == tmp_path / "report.md" and r.out_dir == tmp_path
    assert r.html_path == tmp_path / "report.html"
    assert (r.version, r.commit) == ("0.1.0", "abc1234")
    assert "2.00x" in repr(r)


def test_version_and_commands_come_from_the_binary():
    v = tritonforge.version()
    assert v["version"] == tritonforge.__version__
    assert v["commit"] == "unknown" or v["commit"].split("-")[0].isalnum()
    cmds = tritonforge.commands()
    for name in ("analyze", "optimize", "profile", "db"):
        assert name in cmds


def test_one_version_for_the_binary_the_package_and_the_worker():
    # CMakeLists.txt's project VERSION is the source; the worker ships inside the same wheel.
    import tritonforge_worker
    assert tritonforge.__version__ == tritonforge.version()["version"] == tritonforge_worker.WORKER_VERSION


def test_check_names_a_missing_baseline_file(tmp_path):
    """check reads the baseline before it looks for a GPU: bad input on any machine."""
    missing = tmp_path / "baseline.json"
    with pytest.raises(tritonforge.BadInputError, match="baseline.json") as e:
        tritonforge.check(ROOT / "examples" / "matmul" / "task.toml", baseline=missing, progress=False)
    assert e.value.returncode == 2
    assert not missing.exists()


def test_check_names_a_database_that_is_none(tmp_path):
    """check --db reads the database before it looks for a GPU; both places at once is bad input."""
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database")
    with pytest.raises(tritonforge.BadInputError, match="notes.txt") as e:
        tritonforge.check(ROOT / "examples" / "matmul" / "task.toml", db=notes, progress=False)
    assert e.value.returncode == 2
    assert notes.read_text() == "not a database"
    with pytest.raises(tritonforge.BadInputError, match="--baseline FILE or --db FILE"):
        tritonforge.check(ROOT / "examples" / "matmul" / "task.toml", db=notes, baseline=tmp_path / "b.json",
                          progress=False)


# ---------------------------------------------------------------------------------------------
# tasks built in Python

# A notebook or script: functions of __main__, which are copied into the harness with what
# they use (a module, constants, a helper function, a name imported from a module).
NOTEBOOK = '''
import math
import torch
from os.path import join as joined

SCALE = 3.0
KEYS = ("M", "N")
DTYPE = torch.float32
unrelated_tensor = torch.zeros(3)

def shape_of(case):
    return tuple(case[k] for k in KEYS)

def my_inputs(case, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(case["M"], case["N"], device="cuda", dtype=DTYPE, generator=g) * SCALE
    return (x,)

def my_reference(x: "torch.Tensor") -> torch.Tensor:
    return torch.softmax(x, dim=-1)

def my_bytes(case):
    m, n = shape_of(case)
    return 2 * m * n * 4 + len(joined("a", "b")) * 0 + int(math.sqrt(4)) * 0

def pure_inputs(case, seed):
    return [case["M"] * SCALE + seed, [shape_of(case)], joined("a", "b")]

def uses_tensor(case, seed):
    return (unrelated_tensor,)

def make_closure():
    k = 2
    def inner(case, seed):
        return (k,)
    return inner
'''


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    pytest.importorskip("torch")
    import runpy
    path = tmp_path_factory.mktemp("nb") / "notebook.py"
    path.write_text(NOTEBOOK)
    return runpy.run_path(str(path), run_name="__main__")


def softmax_task(nb, **kw):
    args = dict(name="softmax_py", source=ROOT / "examples" / "softmax" / "softmax.py", launcher="softmax",
                make_inputs=nb["my_inputs"], reference=nb["my_reference"], bytes=nb["my_bytes"],
                cases=[{"M": 256, "N": 1024}, {"M": 64, "N": 4000}], rtol=1e-4, atol=1e-6,
                signature={"softmax_rows": {"out_ptr": "*fp32", "in_ptr": "*fp32", "n_cols": "i32",
                                            "in_stride": "i32", "out_stride": "i32", "BLOCK": 1024}})
    args.update(kw)
    return tritonforge.Task(**args)


def test_a_python_task_is_written_as_a_task_file_and_a_harness(notebook, tmp_path):
    task_file = softmax_task(notebook, seeds=3, in_place=[]).write(tmp_path)
    assert task_file == tmp_path / "task.toml"
    t = _toml(task_file)
    harness = tmp_path / "softmax_py_harness.py"
    assert t == {
        "name": "softmax_py", "source": str(ROOT / "examples" / "softmax" / "softmax.py"), "launcher": "softmax",
        "harness": str(harness), "cases": [{"M": 256, "N": 1024}, {"M": 64, "N": 4000}],
        "check": {"rtol": 1e-4, "atol": 1e-6, "seeds": 3, "in_place": []},
        "signature": {"softmax_rows": {"out_ptr": "*fp32", "in_ptr": "*fp32", "n_cols": "i32", "in_stride": "i32",
                                       "out_stride": "i32", "BLOCK": 1024}},
    }
    text = harness.read_text()
    # Each function under its role's name, with what it reads from the notebook, and nothing else.
    assert "def make_inputs(case, seed):" in text and "def my_inputs" not in text
    assert "def reference(x: \"torch.Tensor\") -> torch.Tensor:" in text
    assert "def bytes(case):" in text and "def shape_of(case):" in text
    assert "import torch\n" in text and "import math\n" in text
    assert "from posixpath import join as joined\n" in text
    assert "SCALE = 3.0\n" in text and "KEYS = ('M', 'N')\n" in text and "DTYPE = torch.float32\n" in text
    assert "unrelated_tensor" not in text and "pure_inputs" not in text
    compile(text, str(harness), "exec")
    # The module runs on its own: its bytes() gives the notebook's answer.
    mod = _load(harness, "written_harness")
    assert mod.bytes({"M": 3, "N": 5}) == notebook["my_bytes"]({"M": 3, "N": 5}) == 120


def test_the_binary_reads_a_python_task(notebook, tmp_path):
    # analyze with the task as its cases: the binary parses the task file and evaluates the
    # written make_inputs statically (shapes per case).
    task = softmax_task(notebook)
    facts = tritonforge.analyze(task, compile=False, progress=False)
    assert [k["name"] for k in facts["kernels"]] == ["softmax_rows"]
    # The inputs the written make_inputs makes (its dtype from the notebook's DTYPE constant).
    assert [c["inputs"] for c in facts["task"]["cases"]] == [["tensor fp32[256, 1024] strides (1024, 1)"],
                                                            ["tensor fp32[64, 4000] strides (4000, 1)"]]
    assert [c["launches"][0]["args"]["BLOCK"] for c in facts["task"]["cases"]] == ["1024", "4096"]


@pytest.mark.skipif(_gpu_visible(), reason="a GPU is visible: this test is for machines without one")
def test_optimize_of_a_python_task_without_a_gpu_runs_its_compile_checks(notebook, tmp_path):
    with pytest.raises(tritonforge.NoGpuError) as e:
        tritonforge.optimize(softmax_task(notebook), out=tmp_path, db=False, progress=False)
    result = e.value.result
    assert result.data["task"]["name"] == "softmax_py"
    assert result.data["task"]["launcher"] == "softmax"
    assert [(c["kernel"], c["status"]) for c in result.compile_checks] == [("softmax_rows", "ok")]
    assert result.out_dir == tmp_path / "softmax_py"


def test_harness_functions_run_as_written(notebook, tmp_path):
    t = tritonforge.Task(name="pure", source=ROOT / "examples" / "softmax" / "softmax.py", launcher="softmax",
                         make_inputs=notebook["pure_inputs"], reference=notebook["my_reference"],
                         cases=[{"M": 2, "N": 3}])
    t.write(tmp_path)
    mod = _load(tmp_path / "pure_harness.py", "pure_harness")
    assert mod.make_inputs({"M": 2, "N": 3}, 1) == notebook["pure_inputs"]({"M": 2, "N": 3}, 1) == [7.0, [(2, 3)],
                                                                                                     "a/b"]


def test_functions_that_cannot_be_written_are_refused_by_name(notebook, tmp_path):
    src = ROOT / "examples" / "softmax" / "softmax.py"

    def refused(match, **kw):
        args = dict(name="t", source=src, launcher="softmax", make_inputs=notebook["my_inputs"],
                    reference=notebook["my_reference"], cases=[{"M": 1, "N": 1}])
        args.update(kw)
        with pytest.raises(tritonforge.BadInputError, match=match):
            tritonforge.Task(**args).write(tmp_path / "t")
        assert not (tmp_path / "t" / "task.toml").exists()

    refused(r"make_inputs.*global 'unrelated_tensor' \(a Tensor\)", make_inputs=notebook["uses_tensor"])
    refused(r"make_inputs is a lambda", make_inputs=lambda case, seed: (1,))
    refused(r"make_inputs is a closure over k", make_inputs=notebook["make_closure"]())
    refused(r"reference is missing", reference=None)
    refused(r"cases must be a non-empty list", cases=[])
    refused(r"task name 'a b'", name="a b")
    refused(r"source .* is not a file", source=src.parent / "nothere.py")
    refused(r"either harness=PATH or the harness functions", harness=ROOT / "examples/softmax/softmax_harness.py")


def test_a_task_with_a_harness_file_is_written_with_that_file(tmp_path):
    example = ROOT / "examples" / "softmax"
    t = tritonforge.Task(name="softmax", source=example / "softmax.py", launcher="softmax",
                         harness=example / "softmax_harness.py", cases=[{"M": 4, "N": 8}], rtol=0.5)
    task_file = t.write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["task.toml"]
    d = _toml(task_file)
    assert d["harness"] == str(example / "softmax_harness.py") and d["check"] == {"rtol": 0.5}


def test_toml_values_round_trip(tmp_path):
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    cases = [{"s": 'q"uo\\te\n\ttab \u00e9', "b": True, "f": 1e-7, "big": 2 ** 40, "neg": -3,
              "arr": [1, 2, 3], "nested": [[1.5, 2.5], ["x"]], "with space": 1}]
    text = tritonforge.Task(name="t", source=ROOT / "examples/softmax/softmax.py", launcher="softmax",
                            harness=ROOT / "examples/softmax/softmax_harness.py", cases=cases).toml("h.py")
    assert tomllib.loads(text)["cases"] == cases
    with pytest.raises(tritonforge.BadInputError, match=r"'cases\[0\].x' must be a number"):
        tritonforge.Task(name="t", source=ROOT / "examples/softmax/softmax.py", launcher="softmax",
                         harness=ROOT / "examples/softmax/softmax_harness.py", cases=[{"x": object()}]).toml("h")


def test_optimize_writes_a_python_task_for_the_call_only(notebook, tmp_path, monkeypatch):
    # The binary refuses the task (bad tolerance), which shows the written file was read; the
    # temporary folder is gone afterwards.
    seen = []
    real_write = tritonforge.Task.write

    def spy(self, folder):
        seen.append(Path(folder))
        return real_write(self, folder)

    monkeypatch.setattr(tritonforge.Task, "write", spy)
    with pytest.raises(tritonforge.BadInputError, match=r"task.toml: key 'check.rtol' must be a finite number"):
        tritonforge.optimize(softmax_task(notebook, rtol=-1.0), out=tmp_path, progress=False)
    assert len(seen) == 1 and not seen[0].exists()


# ---------------------------------------------------------------------------------------------
# the launcher


def test_the_launcher_runs_the_binary_with_this_interpreter_as_the_worker(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITONFORGE_PYTHON"}
    env["PYTHONPATH"] = str(ROOT / "python")
    p = subprocess.run([sys.executable, "-m", "tritonforge", "--version"], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    v = tritonforge.version()
    assert p.stdout.strip() == f"tritonforge {v['version']} (commit {v['commit']})"
    # Exit codes pass through: bad input is 2 with one line.
    p = subprocess.run([sys.executable, "-m", "tritonforge", "optimize", str(tmp_path / "x.toml")],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 2 and p.stderr == f"tritonforge: {tmp_path}/x.toml: task file not found\n"
    assert child_environment({})["TRITONFORGE_PYTHON"] == sys.executable
    assert child_environment({"TRITONFORGE_PYTHON": "/opt/py"})["TRITONFORGE_PYTHON"] == "/opt/py"


def test_the_launcher_without_a_binary_says_so_in_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), TRITONFORGE_BINARY=str(tmp_path / "none"))
    p = subprocess.run([sys.executable, "-m", "tritonforge", "--version"], capture_output=True, text=True, env=env)
    assert p.returncode == 1
    assert p.stderr == f"tritonforge: TRITONFORGE_BINARY={tmp_path / 'none'} is not an executable file\n"
    with pytest.raises(tritonforge.EnvironmentFailedError, match="TRITONFORGE_BINARY"):
        os.environ["TRITONFORGE_BINARY"] = str(tmp_path / "none")
        try:
            tritonforge.version()
        finally:
            del os.environ["TRITONFORGE_BINARY"]


# ---------------------------------------------------------------------------------------------
# a stand-in binary: every exit code, and Ctrl-C

FAKE = """#!/bin/sh
trap 'echo interrupted > "$TF_FAKE_MARK"; exit 130' INT
: > "$TF_FAKE_MARK.trapped"
echo "progress line" >&2
echo '{"case": 0, "verify": "failed"}'
echo "tritonforge: boom ($*)" >&2
if [ "$TF_FAKE_SLEEP" = 1 ]; then sleep 30 & wait $!; fi
exit "$TF_FAKE_RC"
"""


@pytest.fixture
def fake_binary(tmp_path, monkeypatch):
    path = tmp_path / "fake-tritonforge"
    path.write_text(FAKE)
    path.chmod(0o755)
    monkeypatch.setenv("TRITONFORGE_BINARY", str(path))
    monkeypatch.setenv("TF_FAKE_MARK", str(tmp_path / "mark"))
    return tmp_path


@pytest.mark.parametrize("rc, kind", [(1, tritonforge.EnvironmentFailedError), (2, tritonforge.BadInputError),
                                      (3, tritonforge.NoGpuError), (4, tritonforge.CaseFailedError),
                                      (9, tritonforge.TritonForgeError)])
def test_each_exit_code_has_its_exception(fake_binary, monkeypatch, rc, kind):
    monkeypatch.setenv("TF_FAKE_RC", str(rc))
    lines = []
    with pytest.raises(kind) as e:
        tritonforge.profile(fake_binary / "task.toml", progress=lines.append)
    assert type(e.value) is kind
    assert e.value.returncode == rc
    assert str(e.value) == f"boom (profile {fake_binary}/task.toml --json)"
    assert lines == ["progress line", f"tritonforge: boom (profile {fake_binary}/task.toml --json)"]
    if rc in (3, 4):
        assert e.value.result == {"case": 0, "verify": "failed"}


def test_ctrl_c_stops_the_binary_the_way_ctrl_c_would(fake_binary, monkeypatch):
    import signal
    import time
    monkeypatch.setenv("TF_FAKE_RC", "0")
    monkeypatch.setenv("TF_FAKE_SLEEP", "1")

    seen = []

    def interrupt(signum, frame):
        # Ctrl-C once the stand-in has set its trap (on a loaded machine the shell may take
        # longer than the first alarm to start), and a moment later, so that it does not land
        # inside subprocess.Popen before it has handed back the process (a Ctrl-C there leaves
        # the child running: the API never had it to stop).
        if not (fake_binary / "mark.trapped").exists() or not seen:
            seen.extend([True] if (fake_binary / "mark.trapped").exists() else [])
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            return
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    # Run as a background job (`pytest ... &`, a CI script started with &), this process has
    # SIGINT ignored, and a child inherits that: the stand-in shell can then not trap it (POSIX:
    # a signal ignored on entry to a non-interactive shell cannot be trapped), while the real
    # binary installs its own handler. A handler here makes the child start with the default.
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    started = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(KeyboardInterrupt):
            tritonforge.analyze(fake_binary / "k.py", progress=False)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        signal.signal(signal.SIGINT, old_int)
    assert time.monotonic() - started < 20
    assert (fake_binary / "mark").read_text() == "interrupted\n"

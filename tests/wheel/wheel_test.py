"""The wheel as a user gets it (CTest `wheel`, label "wheel"): builds it with pip and
scikit-build-core, installs it into a fresh virtual environment with Triton and nothing of
this checkout, and runs what a user would: `tritonforge --version`, `python -m tritonforge`,
`tritonforge analyze` and `optimize` on an example (exit 3 without a GPU), and the Python API.

Run by the project's .venv interpreter (it has scikit-build-core: python/requirements-test.txt);
exits 77 (skipped) where that interpreter lacks it. The build folder is build/wheel/test-cmake,
kept between runs, so that a second run recompiles only what changed (pip's build isolation
is off: scikit-build-core empties a build folder that another environment's scikit-build-core
configured, which is why this is not pyproject.toml's build-dir, which a user's isolated
`pip install .` empties every time); ccache is used where it is installed.

Environment: TRITONFORGE_WHEEL_KEEP=1 keeps the virtual environment and the outputs
(build/wheel/venv, build/wheel/out) for a look afterwards; they are replaced on the next run
either way.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "wheel"
SKIP = 77
STARTED = time.monotonic()


def say(msg: str) -> None:
    print(f"[wheel {time.monotonic() - STARTED:6.1f}s] {msg}", flush=True)


def fail(msg: str) -> None:
    print(f"FAILED: {msg}", flush=True)
    sys.exit(1)


def check(cond: bool, msg: str) -> None:
    if not cond:
        fail(msg)


def run(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, log: Path | None = None,
        ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    p = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True)
    if log is not None:
        log.write_text(p.stdout + p.stderr)
    if p.returncode not in ok:
        tail = "\n".join((p.stdout + p.stderr).splitlines()[-40:])
        fail(f"{' '.join(str(c) for c in cmd)}: exit {p.returncode} (expected {ok})\n{tail}")
    return p


def project_version() -> str:
    m = re.search(r"project\(tritonforge VERSION ([0-9][0-9.]*)", (ROOT / "CMakeLists.txt").read_text())
    check(m is not None, "CMakeLists.txt names no project VERSION")
    return m.group(1)


def git_head() -> str | None:
    """`git rev-parse --short HEAD` when ROOT is the top of a git checkout, else None."""
    top = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != ROOT:
        return None
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return head.stdout.strip() if head.returncode == 0 else None


def build_wheel(dist: Path) -> Path:
    shutil.rmtree(dist, ignore_errors=True)
    env = dict(os.environ)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(min(os.cpu_count() or 2, 8)))
    cmd = [sys.executable, "-m", "pip", "wheel", ROOT, "--no-build-isolation", "--no-deps", "-w", dist,
           "-C", f"build-dir={WORK / 'test-cmake'}"]
    if shutil.which("ccache"):
        # Precompiled headers defeat ccache; with it, every object of an earlier build is reused.
        cmd += ["-C", "cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache", "-C", "cmake.define.TRITONFORGE_PCH=OFF"]
    say("building the wheel (pip wheel, scikit-build-core, build folder build/wheel/test-cmake)")
    run(cmd, env=env, cwd=ROOT, log=WORK / "build.log")
    wheels = sorted(dist.glob("*.whl"))
    check(len(wheels) == 1, f"expected one wheel in {dist}, found {[w.name for w in wheels]}")
    return wheels[0]


def check_wheel_contents(wheel: Path, version: str) -> None:
    check(re.fullmatch(rf"tritonforge-{re.escape(version)}-py3-none-linux_\w+\.whl", wheel.name) is not None,
          f"wheel name {wheel.name}: expected tritonforge-{version}-py3-none-linux_<arch>.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for needed in ("tritonforge/__init__.py", "tritonforge/__main__.py", "tritonforge/api.py",
                       "tritonforge/_version.py", "tritonforge/_core/bin/tritonforge",
                       "tritonforge/_core/python/tritonforge_worker/__init__.py",
                       "tritonforge/_core/python/tritonforge_worker/server.py"):
            check(needed in names, f"{wheel.name} lacks {needed}")
        check(not any("__pycache__" in n or n.endswith(".pyc") for n in names), "the wheel holds compiled Python")
        mode = z.getinfo("tritonforge/_core/bin/tritonforge").external_attr >> 16
        check(mode & 0o111 != 0, f"the binary in the wheel is not executable (mode {oct(mode)})")
        check(f'version = "{version}"' in z.read("tritonforge/_version.py").decode(),
              "tritonforge/_version.py does not hold the project version")
        entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        check("tritonforge = tritonforge._launcher:main" in z.read(entry).decode(),
              "no `tritonforge` console script in entry_points.txt")


def make_venv(venv: Path, wheel: Path) -> Path:
    shutil.rmtree(venv, ignore_errors=True)
    say("creating a fresh virtual environment")
    run([sys.executable, "-m", "venv", venv])
    py = venv / "bin" / "python"
    run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheel])
    # The user's Triton: the version this project tests with, from pip's cache when it is there.
    triton = importlib.metadata.version("triton")
    say(f"installing the wheel and triton=={triton}")
    run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", f"triton=={triton}"])
    return py


def check_static(binary: Path) -> None:
    p = run(["ldd", binary], ok=(0, 1))
    libs = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
    glibc = re.compile(r"^(linux-vdso\.so\.1|linux-gate\.so\.1|/?\S*ld-linux[-\w.]*\.so\.\d+|lib(c|m|dl|pthread|rt)\.so\.\d+)$")
    others = [lib for lib in libs if not glibc.match(lib)]
    check(not others, f"{binary} needs libraries beyond glibc's: {others}")


API_SCRIPT = r"""
import json, sys, tritonforge
from pathlib import Path
from tritonforge._launcher import binary_path, child_environment
root, out, version, commit = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
assert tritonforge.__version__ == version, tritonforge.__version__
assert Path(tritonforge.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()), tritonforge.__file__
assert binary_path().resolve().is_relative_to(Path(sys.prefix).resolve()), binary_path()
assert child_environment({})["TRITONFORGE_PYTHON"] == sys.executable
assert tritonforge.version() == {"version": version, "commit": commit}, tritonforge.version()
assert "optimize" in tritonforge.commands() and "analyze" in tritonforge.commands(), tritonforge.commands()
facts = tritonforge.analyze(root + "/examples/softmax/softmax.py", progress=False)
assert any(k.get("name") == "softmax_rows" for k in facts["kernels"]), list(facts)
try:
    tritonforge.analyze(root + "/examples/softmax/missing.py", progress=False)
    raise SystemExit("analyze of a missing file raised nothing")
except tritonforge.BadInputError as e:
    assert e.returncode == 2 and "missing.py" in str(e), e
lines = []
try:
    r = tritonforge.optimize(root + "/examples/softmax/task.toml", out=out, db=False, progress=lines.append)
    print(json.dumps({"status": r.status}))
except tritonforge.NoGpuError as e:
    assert e.returncode == 3 and e.result.status == "no-gpu", e
    assert [c["status"] for c in e.result.compile_checks] == ["ok"], e.result.compile_checks
    assert e.result.commit == commit and e.result.version == version
    assert e.result.result_path == out / "softmax" / "result.json", e.result.result_path
    assert any("Tunables" in line for line in lines), lines
    print(json.dumps({"status": "no-gpu"}))
"""


def main() -> int:
    try:
        import scikit_build_core  # noqa: F401
    except ImportError:
        print(f"SKIPPED: {sys.executable} has no scikit-build-core (scripts/setup.sh --tests installs it)")
        return SKIP
    WORK.mkdir(parents=True, exist_ok=True)
    version = project_version()
    head = git_head()
    wheel = build_wheel(WORK / "dist")
    say(f"built {wheel.name} ({wheel.stat().st_size / 1e6:.1f} MB)")
    check_wheel_contents(wheel, version)
    venv = WORK / "venv"
    py = make_venv(venv, wheel)
    site = Path(run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    binary = site / "tritonforge" / "_core" / "bin" / "tritonforge"
    check(binary.is_file(), f"{binary} was not installed")
    check_static(binary)

    # What the user's shell has: no variable of this checkout, the environment's bin not even
    # on PATH (the commands are called by path), so that nothing but the launcher can make the
    # environment's interpreter the worker's.
    env = {k: v for k, v in os.environ.items()
           if k not in ("TRITONFORGE_PYTHON", "TRITONFORGE_WORKER_DIR", "TRITONFORGE_BINARY", "PYTHONPATH",
                        "VIRTUAL_ENV", "PYTHONHOME")}
    env["TRITONFORGE_CACHE_DIR"] = str(WORK / "cache")
    out = WORK / "out"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(WORK / "cache", ignore_errors=True)
    cli = venv / "bin" / "tritonforge"
    with tempfile.TemporaryDirectory(prefix="tf-wheel-") as scratch:
        cwd = Path(scratch)  # not the checkout: its python/ must not be what gets imported
        say("tritonforge --version, python -m tritonforge --version")
        line = run([cli, "--version"], env=env, cwd=cwd).stdout.strip()
        m = re.fullmatch(r"tritonforge (\S+) \(commit (\S+)\)", line)
        check(m is not None, f"--version printed {line!r}")
        check(m.group(1) == version, f"--version names {m.group(1)}, CMakeLists.txt {version}")
        commit = m.group(2)
        if head is not None:
            check(commit.split("-")[0] == head, f"--version names commit {commit}, the checkout is at {head}")
        else:
            check(commit == "unknown", f"not a git checkout, yet --version names commit {commit}")
        check(run([py, "-m", "tritonforge", "--version"], env=env, cwd=cwd).stdout.strip() == line,
              "python -m tritonforge --version differs from tritonforge --version")

        say("tritonforge analyze examples/matmul/matmul.py --json")
        facts = json.loads(run([cli, "analyze", ROOT / "examples/matmul/matmul.py", "--json"], env=env, cwd=cwd).stdout)
        check([k.get("name") for k in facts.get("kernels", [])] == ["matmul_kernel"],
              f"analyze found kernels {[k.get('name') for k in facts.get('kernels', [])]}")
        bad = run([cli, "analyze", ROOT / "examples/matmul/nothere.py"], env=env, cwd=cwd, ok=(2,))
        check(len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr,
              f"bad input should give one line, got:\n{bad.stderr}")

        say("tritonforge optimize examples/matmul/task.toml (exit 3 without a GPU)")
        p = run([cli, "optimize", ROOT / "examples/matmul/task.toml", "--out", out, "--no-db"], env=env, cwd=cwd,
                ok=(0, 3))
        result = json.loads((out / "matmul" / "result.json").read_text())
        check(result["tool"] == {"name": "tritonforge", "version": version, "commit": commit,
                                 "worker_protocol": result["tool"].get("worker_protocol")},
              f"result.json's tool block: {result['tool']}")
        if p.returncode == 3:
            check(result["status"] == "no-gpu", f"exit 3 but status {result['status']}")
            statuses = [c["status"] for c in result["compile_checks"]]
            # "ok" proves the worker ran on the environment's interpreter: Triton is there.
            check(statuses == ["ok"], f"compile checks {statuses}: {result['compile_checks']}")
        else:
            check(result["status"] in ("improved", "unchanged"), f"exit 0 with status {result['status']}")

        say("the Python API in the fresh environment")
        p = run([py, "-c", API_SCRIPT, ROOT, WORK / "api-out", version, commit], env=env, cwd=cwd)
        check(json.loads(p.stdout.strip().splitlines()[-1])["status"] in ("no-gpu", "improved", "unchanged"),
              p.stdout)
    if os.environ.get("TRITONFORGE_WHEEL_KEEP") != "1":
        shutil.rmtree(venv, ignore_errors=True)
    say("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

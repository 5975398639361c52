"""The Python API: each function runs one tritonforge command with the binary (there is no
second implementation of anything here), streams its progress, and returns its JSON output
as Python data, or raises the exception of its exit code (errors.py).

    optimize(task, ...) -> OptimizeResult     `tritonforge optimize TASK --json --progress`
    analyze(source, ...) -> dict              `tritonforge analyze SOURCE --json`
    profile(task, ...) -> dict                `tritonforge profile TASK --json`
    check(task, ...) -> dict                  `tritonforge check TASK --json` where the binary has it
    commands() -> list[str]                   the binary's commands (from its --help)
    version() -> dict                         {"version", "commit"} of the binary

A task is the path of a task file or a Task built in Python (task.py), which is written into a
temporary folder for the call. Progress (the binary's stderr, one line at a time) goes to
`progress`: None writes it to sys.stderr, False drops it, a callable gets each line.
`python` chooses the worker's interpreter (default: this one, see _launcher.py).
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from ._launcher import binary_path, child_environment
from .errors import (BadInputError, CommandNotAvailableError, NoGpuError, RegressionError, TritonForgeError,
                     error_for_exit)
from .result import OptimizeResult
from .task import Task

Progress = Union[None, bool, Callable[[str], Any]]
TaskLike = Union[str, os.PathLike, Task]


class _Run:
    """One finished command: exit code, stdout, and the last lines of stderr."""

    def __init__(self, returncode: int, stdout: str, stderr_lines: list[str]):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr_lines = stderr_lines

    @property
    def stderr(self) -> str:
        return "\n".join(self.stderr_lines)

    def message(self) -> str:
        """The command's one-line error: its last `tritonforge: ...` line."""
        for line in reversed(self.stderr_lines):
            if line.startswith("tritonforge: "):
                return line[len("tritonforge: "):]
        for line in reversed(self.stderr_lines):
            if line.strip():
                return line.strip()
        if self.returncode < 0:
            return f"tritonforge was killed by signal {-self.returncode}"
        return f"tritonforge exited with code {self.returncode}"

    def error(self, result: Any = None) -> TritonForgeError:
        return error_for_exit(self.returncode, self.message(), self.stderr, result)


def _sink(progress: Progress) -> Callable[[str], Any] | None:
    if progress is False:
        return None
    if progress is None or progress is True:
        def write(line: str) -> None:
            print(line, file=sys.stderr, flush=True)
        return write
    if not callable(progress):
        raise BadInputError(f"progress must be None, False or a function of one line, not {type(progress).__name__}")
    return progress


def _stop(proc: subprocess.Popen) -> None:
    """Asks the binary to stop as Ctrl-C would (it removes its temporary files), then insists."""
    for send, wait in ((lambda: proc.send_signal(signal.SIGINT), 10), (proc.terminate, 5), (proc.kill, None)):
        if proc.poll() is not None:
            return
        send()
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run(args: Sequence[str], *, python: str | os.PathLike | None = None, progress: Progress = None) -> _Run:
    """Runs `tritonforge ARGS` and returns its exit code, stdout and last stderr lines without
    raising for a failed command (the functions below do that)."""
    sink = _sink(progress)
    cmd = [str(binary_path())]
    if python is not None:
        cmd += ["--python", os.fspath(python)]
    cmd += [os.fspath(a) for a in args]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=child_environment())
    except OSError as e:
        raise error_for_exit(1, f"cannot run {cmd[0]}: {e.strerror or e}") from None
    tail: collections.deque[str] = collections.deque(maxlen=200)
    failures: list[BaseException] = []

    def pump() -> None:
        assert proc.stderr is not None
        for raw in iter(proc.stderr.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            tail.append(line)
            if sink is not None and not failures:
                try:
                    sink(line)
                except BaseException as e:  # noqa: BLE001 - handed back to the caller below
                    failures.append(e)

    reader = threading.Thread(target=pump, name="tritonforge-stderr", daemon=True)
    reader.start()
    interrupted = False
    try:
        assert proc.stdout is not None
        out = proc.stdout.read()
        returncode = proc.wait()
    except BaseException:
        interrupted = True
        _stop(proc)
        raise
    finally:
        # A process the binary left behind may still hold stderr open: the reader is then left
        # to finish on its own (closing the stream under it would wait for it).
        reader.join(timeout=1 if interrupted else 10)
        if proc.stdout is not None:
            proc.stdout.close()
        if proc.stderr is not None and not reader.is_alive():
            proc.stderr.close()
    if failures:
        raise failures[0]
    return _Run(returncode, out.decode("utf-8", errors="replace"), list(tail))


def _json_of(r: _Run, what: str) -> Any:
    try:
        return json.loads(r.stdout)
    except ValueError:
        raise TritonForgeError(f"tritonforge {what} printed no JSON (exit code {r.returncode}): "
                               f"{r.message()}", returncode=r.returncode, stderr=r.stderr) from None


@contextlib.contextmanager
def _task_file(task: TaskLike) -> Iterator[Path]:
    """The task file for `task`: a path as it is, a Task written into a temporary folder."""
    if isinstance(task, Task):
        with tempfile.TemporaryDirectory(prefix=f"tritonforge-task-{task.name}-") as folder:
            yield task.write(folder)
        return
    if isinstance(task, (str, os.PathLike)):
        yield Path(task).expanduser().absolute()
        return
    raise BadInputError(f"a task is the path of a task file or a tritonforge.Task, not {type(task).__name__}")


def _flag(args: list[str], name: str, value: Any) -> None:
    if value is not None:
        args += [name, str(value)]


def optimize(task: TaskLike, *, out: str | os.PathLike | None = None, budget: float | None = None,
             effort: str | None = None, strategy: str | None = None, seed: int | None = None, jobs: int | None = None,
             engine: str | None = None, only: Mapping[str, Sequence[int]] | None = None,
             no_pass: Sequence[str] = (), no_passes: bool = False, db: str | os.PathLike | bool | None = None,
             fresh: bool = False, args: Sequence[str] = (), python: str | os.PathLike | None = None,
             progress: Progress = None, verbose: bool = False) -> OptimizeResult:
    """Optimizes a task (a task file's path or a Task) as `tritonforge optimize` does, and
    returns the result (result.json as an OptimizeResult). The files go to OUT/NAME/ (OUT:
    `out`, default ./tritonforge-out). `db`: None for the per-user results database, False for
    none (--no-db), or a path. `effort`: "quick", "default" or "full" (--effort; the flags given
    here override the preset). `args`: more command-line flags, as the command takes them.

    Raises BadInputError (a bad task or argument), EnvironmentFailedError (no worker, no
    binary), NoGpuError (no CUDA GPU: only the analysis and compile checks ran; its `result`
    is the OptimizeResult with them)."""
    argv: list[str] = []
    _flag(argv, "--out", os.fspath(out) if out is not None else None)
    _flag(argv, "--budget", budget)
    _flag(argv, "--effort", effort)
    _flag(argv, "--strategy", strategy)
    _flag(argv, "--seed", seed)
    _flag(argv, "--jobs", jobs)
    _flag(argv, "--engine", engine)
    for param, values in (only or {}).items():
        argv += ["--only", f"{param}={','.join(str(v) for v in values)}"]
    for name in ([no_pass] if isinstance(no_pass, str) else no_pass):
        argv += ["--no-pass", name]
    if no_passes:
        argv.append("--no-passes")
    if db is False:
        argv.append("--no-db")
    elif db is not None and db is not True:
        argv += ["--db", os.fspath(db)]
    if fresh:
        argv.append("--fresh")
    if verbose:
        argv.append("-v")
    argv += list(args)
    with _task_file(task) as path:
        r = run(["optimize", str(path), "--json", "--progress", *argv], python=python, progress=progress)
    if r.returncode in (0, 3):
        result = OptimizeResult.from_json(_json_of(r, "optimize"))
        if r.returncode == 0:
            return result
        reason = (result.data.get("environment") or {}).get("no_gpu_reason") or "none is visible"
        raise NoGpuError(f"no CUDA GPU ({reason}): only the analysis and the compile checks ran "
                         "(their results are in this exception's .result)",
                         returncode=3, stderr=r.stderr, result=result)
    raise r.error()


def analyze(source: str | os.PathLike | Task, *, kernel: str | None = None, launcher: str | None = None,
            cases: TaskLike | None = None, compile: bool = True, compile_limit: int | None = None,
            args: Sequence[str] = (), python: str | os.PathLike | None = None, progress: Progress = None) -> Any:
    """Static analysis of a Triton source (`tritonforge analyze --json`): kernels, parameters,
    launch sites, facts, tunables; per case and compiled facts with `cases` (a task). Given a
    Task, analyzes its source with it as the cases. Returns the JSON (docs/analyze.md)."""
    if isinstance(source, Task):
        cases = source if cases is None else cases
        launcher = launcher or source.launcher_name()
        source = source.source_path()
    argv = ["analyze", os.fspath(Path(source).expanduser().absolute()), "--json"]
    _flag(argv, "--kernel", kernel)
    _flag(argv, "--launcher", launcher)
    _flag(argv, "--compile-limit", compile_limit)
    if not compile:
        argv.append("--no-compile")
    argv += list(args)
    with contextlib.ExitStack() as stack:
        if cases is not None:
            argv += ["--cases", str(stack.enter_context(_task_file(cases)))]
        r = run(argv, python=python, progress=progress)
    if r.returncode != 0:
        raise r.error()
    return _json_of(r, "analyze")


def profile(task: TaskLike, *, ncu: bool = False, case: int | None = None, args: Sequence[str] = (),
            python: str | os.PathLike | None = None, progress: Progress = None) -> Any:
    """Measures the kernel as written (`tritonforge profile --json`): verification, time,
    roofline, diagnosis. Raises NoGpuError without a GPU and CaseFailedError (with the report as
    `.result`) when a case failed."""
    argv: list[str] = ["--json"]
    if ncu:
        argv.append("--ncu")
    _flag(argv, "--case", case)
    argv += list(args)
    with _task_file(task) as path:
        r = run(["profile", str(path), *argv], python=python, progress=progress)
    if r.returncode == 0:
        return _json_of(r, "profile")
    report = None
    if r.returncode in (3, 4):
        with contextlib.suppress(ValueError):
            report = json.loads(r.stdout)
    raise r.error(report)


def check(task: TaskLike, *, baseline: str | os.PathLike | None = None, db: str | os.PathLike | None = None,
          args: Sequence[str] = (), python: str | os.PathLike | None = None, progress: Progress = None) -> Any:
    """Runs `tritonforge check TASK --baseline BASELINE --json ARGS` (the kernel as it stands,
    re-verified and re-timed against the best that `optimize --save-baseline` recorded), or
    with `db=` instead, `--db DB` (the recorded best is the task's latest finished run in that
    results database), and returns its JSON report (schema tritonforge.check/1). A regression or a failed
    verification raises CaseFailedError-like TritonForgeError with the report; no GPU raises
    NoGpuError. Raises CommandNotAvailableError when the binary has no `check` command."""
    if "check" not in commands():
        raise CommandNotAvailableError(f"this tritonforge ({binary_path()}) has no 'check' command "
                                       f"(it has: {', '.join(commands())})")
    with _task_file(task) as path:
        where = (["--baseline", os.fspath(baseline)] if baseline is not None else []) + \
                (["--db", os.fspath(db)] if db is not None else [])
        r = run(["check", str(path), *where, "--json", *args], python=python, progress=progress)
    if r.returncode == 0:
        return _json_of(r, "check")
    report = None
    with contextlib.suppress(ValueError):
        report = json.loads(r.stdout) if r.stdout.strip() else None
    if r.returncode == 1 and isinstance(report, dict) and report.get("schema") == "tritonforge.check/1":
        failed = [f"{t['name']}/{c['label']}: {c['summary']}" for t in report.get("tasks", [])
                  for c in t.get("cases", []) if c.get("verdict") in ("regressed", "failed")]
        raise RegressionError("; ".join(failed) or "a case regressed or failed", returncode=1, stderr=r.stderr,
                              result=report)
    raise r.error(report)


_commands_cache: dict[tuple[str, float], list[str]] = {}


def commands() -> list[str]:
    """The commands of the binary in use, as its --help lists them."""
    binary = binary_path()
    key = (str(binary), binary.stat().st_mtime)
    if key not in _commands_cache:
        r = run(["--help"], progress=False)
        if r.returncode != 0:
            raise r.error()
        names, inside = [], False
        for line in r.stdout.splitlines():
            if re.match(r"^subcommands:\s*$", line, re.IGNORECASE):
                inside = True
            elif inside and line.strip() and line.startswith(" "):
                names.append(line.split()[0])
            elif inside and line.strip():
                inside = False
        _commands_cache[key] = names
    return list(_commands_cache[key])


def version() -> dict[str, str]:
    """{"version": "0.1.0", "commit": "7b6df92"} of the binary in use (`tritonforge --version`)."""
    r = run(["--version"], progress=False)
    m = re.match(r"^tritonforge (\S+) \(commit (\S+)\)", r.stdout.strip())
    if r.returncode != 0 or not m:
        raise TritonForgeError(f"unexpected answer to tritonforge --version: {r.stdout.strip() or r.message()}",
                               returncode=r.returncode, stderr=r.stderr)
    return {"version": m.group(1), "commit": m.group(2)}

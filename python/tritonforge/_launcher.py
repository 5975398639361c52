"""Finds the tritonforge binary and runs it with this interpreter as the worker's.

The `tritonforge` console script and `python -m tritonforge` replace the Python process with
the binary (os.execve: its exit code, signals and terminal are the user's). The API's calls
start it as a child (api.py). Either way the environment gets:

    TRITONFORGE_PYTHON  sys.executable, unless already set: the worker compiles and runs the
                        kernels with the interpreter that has the user's torch and Triton

Where the binary is, in order:
    $TRITONFORGE_BINARY                   an explicit choice
    <package>/_core/bin/tritonforge       the wheel (CMakeLists.txt's SKBUILD layout); the
                                          binary finds its worker in <package>/_core/python
    <checkout>/build/tritonforge          a source checkout whose python/ is on sys.path
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .errors import EnvironmentFailedError

_PACKAGE_DIR = Path(__file__).resolve().parent


def binary_path() -> Path:
    """The tritonforge binary this package runs; EnvironmentFailedError when there is none."""
    explicit = os.environ.get("TRITONFORGE_BINARY")
    if explicit:
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise EnvironmentFailedError(f"TRITONFORGE_BINARY={explicit} is not an executable file")
        return path
    candidates = [_PACKAGE_DIR / "_core" / "bin" / "tritonforge", _PACKAGE_DIR.parent.parent / "build" / "tritonforge"]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise EnvironmentFailedError(
        "cannot find the tritonforge binary (looked at " + ", ".join(str(p) for p in candidates) +
        "); install the package with `pip install .`, build the checkout with scripts/setup.sh, "
        "or set TRITONFORGE_BINARY")


def child_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the binary runs in: `base` (default os.environ) with this interpreter as
    the worker's unless TRITONFORGE_PYTHON is already set."""
    env = dict(os.environ if base is None else base)
    if not env.get("TRITONFORGE_PYTHON") and sys.executable:
        env["TRITONFORGE_PYTHON"] = sys.executable
    return env


def main(argv: list[str] | None = None) -> int:
    """The `tritonforge` command: runs the binary with these arguments in place of this process."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        binary = binary_path()
    except EnvironmentFailedError as e:
        print(f"tritonforge: {e}", file=sys.stderr)
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(str(binary), ["tritonforge", *args], child_environment())
    except OSError as e:
        print(f"tritonforge: cannot run {binary}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 1  # not reached: execve replaced the process

"""What the CPU tests of `capture` and `run --overlay` share: the binary run on the programs of
capture_programs/ under Triton's interpreter."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "python" / "capture_programs"
BINARY = Path(os.environ.get("TRITONFORGE_BINARY", ROOT / "build" / "tritonforge"))


def tool(*args, cwd, **env):
    """The binary with `args` in `cwd`, the worker of this checkout, TRITON_INTERPRET=1 and `env`."""
    env = dict(os.environ, TRITON_INTERPRET="1", TRITONFORGE_PYTHON=sys.executable,
               TRITONFORGE_WORKER_DIR=str(ROOT / "python"), **env)
    return subprocess.run([str(BINARY), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def capture_copy(where, **env):
    """The programs copied into `where` (their files may be edited) and kernels_program.py captured
    with two sizes into where/cap; returns (where, where/cap)."""
    for item in PROGRAMS.iterdir():
        if item.name != "__pycache__":
            (shutil.copytree if item.is_dir() else shutil.copy)(item, where / item.name)
    proc = tool("capture", "-o", "cap", "--", sys.executable, "kernels_program.py", "2", cwd=where, **env)
    assert proc.returncode == 0, proc.stderr
    return where, where / "cap"

"""tritonforge: profile-guided optimization of Triton kernels, from Python.

    import tritonforge
    result = tritonforge.optimize("examples/matmul/task.toml", budget=30)
    print(result.speedup, result.best_config_text)

The work is done by the tritonforge binary (the C++ core, shipped in this package's wheel);
these functions run it, stream its progress, and hand back its results. The worker that
compiles and runs kernels uses this interpreter (its torch and Triton) unless
TRITONFORGE_PYTHON or `python=` says otherwise. The `tritonforge` command and
`python -m tritonforge` run the same binary.
"""

from __future__ import annotations

import re as _re
from pathlib import Path as _Path

from .api import analyze, check, commands, optimize, profile, version
from .capture import capture, overlay
from .errors import (BadInputError, CaseFailedError, CommandNotAvailableError, EnvironmentFailedError, NoGpuError,
                     RegressionError, TritonForgeError)
from .result import CaseResult, OptimizeResult
from .task import Task


def _version() -> str:
    # The wheel has _version.py, written by scikit-build-core from CMakeLists.txt's project
    # VERSION; a source checkout reads that line itself.
    try:
        from ._version import version as v  # type: ignore[import-not-found]
        return v
    except ImportError:
        pass
    cmake = _Path(__file__).resolve().parent.parent.parent / "CMakeLists.txt"
    try:
        m = _re.search(r"project\(tritonforge VERSION ([0-9][0-9.]*)", cmake.read_text(encoding="utf-8"))
    except OSError:
        m = None
    return m.group(1) if m else "unknown"


__version__ = _version()

__all__ = ["BadInputError", "CaseFailedError", "CaseResult", "CommandNotAvailableError", "EnvironmentFailedError",
           "NoGpuError", "RegressionError", "OptimizeResult", "Task", "TritonForgeError", "analyze", "capture", "check", "commands", "optimize", "overlay",
           "profile", "version", "__version__"]

"""The exceptions of the Python API, one per exit code of the tritonforge binary.

    exit 1  EnvironmentFailedError   no Python, a worker that will not start, no binary
    exit 2  BadInputError            a bad task, source, flag or argument (also a ValueError)
    exit 3  NoGpuError               nothing was measured: no CUDA GPU is visible
    exit 4  CaseFailedError          (`profile`) a case failed verification or did not run
    exit 1  RegressionError          (`check`) a case regressed beyond the noise or failed
                                     verification; `result` is the check report
    --      CommandNotAvailableError this binary has no such command (also a NotImplementedError)

Every one carries the command's one-line message (`str(e)`), its exit code (`returncode`) and
the last lines it wrote on stderr (`stderr`). NoGpuError and CaseFailedError also carry what
the command produced before it stopped (`result`): for `optimize` without a GPU, the
OptimizeResult with the compile checks.
"""

from __future__ import annotations

from typing import Any


class TritonForgeError(Exception):
    """A tritonforge command failed; `returncode` is its exit code (None when it never ran)."""

    def __init__(self, message: str, *, returncode: int | None = None, stderr: str = "", result: Any = None):
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.stderr = stderr
        self.result = result


class BadInputError(TritonForgeError, ValueError):
    """Exit 2: the task, a source, a flag or an argument is wrong; the message names which."""


class EnvironmentFailedError(TritonForgeError):
    """Exit 1: the environment failed (no Python for the worker, a worker that will not
    start, the binary missing or not runnable) or an internal error."""


class NoGpuError(TritonForgeError):
    """Exit 3: nothing was measured because no CUDA GPU is visible to the worker's Python.
    `result` holds what ran without one (for `optimize`: the analysis and compile checks)."""


class CaseFailedError(TritonForgeError):
    """Exit 4 (`profile`): a case failed verification or did not run; `result` is the report."""


class RegressionError(TritonForgeError):
    """`check` exited 1 with its report: a case is slower than its baseline beyond the noise,
    or failed verification. `result` is the report (schema tritonforge.check/1)."""


class CommandNotAvailableError(TritonForgeError, NotImplementedError):
    """The tritonforge binary in use has no such command (an older build)."""


def error_for_exit(returncode: int, message: str, stderr: str = "", result: Any = None) -> TritonForgeError:
    """The exception for a command that exited with `returncode` (not 0)."""
    kinds = {1: EnvironmentFailedError, 2: BadInputError, 3: NoGpuError, 4: CaseFailedError}
    kind = kinds.get(returncode, TritonForgeError)
    return kind(message, returncode=returncode, stderr=stderr, result=result)

"""What the request loop (server.py) and the ops (runner.py) both need to know about failures
that end the worker. Kept apart from both so that neither imports the other: the server
dispatches to the ops, and the ops raise what the server acts on.
"""


class FatalWorkerError(Exception):
    """An error after which this process must not serve more requests (CUDA context lost)."""


# CUDA reports these as sticky errors: every later call on the same context fails too, so the
# only way on is a fresh process.
_CONTEXT_FATAL_MARKERS = ("illegal memory access", "illegal address", "unspecified launch failure",
                          "misaligned address", "device-side assert", "cuda error: an illegal",
                          "launch timed out", "context is destroyed", "invalid program counter",
                          "hardware stack error", "illegal instruction")


def is_context_fatal(exc):
    """True when `exc` reports a CUDA error that leaves this process's context unusable."""
    text = f"{type(exc).__name__}: {exc}".lower()
    return any(m in text for m in _CONTEXT_FATAL_MARKERS)


class TaskError(Exception):
    """The task file asks for what its harness contradicts. The core reports it as bad input
    naming the task file (exit 2), not as a failure of the kernel; `tf_data` says which key."""

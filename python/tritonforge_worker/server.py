"""The request loop: one JSON request per line in, one JSON reply per line out.

The reply channel is a private duplicate of the original stdout; the process's own fd 1
is pointed at stderr, so that anything a kernel module, Triton or a C library prints can
never corrupt the protocol. Failures of an op become error replies; a CUDA error that
leaves the context unusable makes the worker exit after replying, so that the core
starts a fresh process.
"""

import json
import os
import sys
import traceback

from . import PROTOCOL_VERSION
from .errors import FatalWorkerError, is_context_fatal
from .ops import dispatch


def _summarize_traceback(exc, limit=12):
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(lines)
    kept = text.strip().splitlines()
    if len(kept) > limit:
        kept = kept[:2] + ["  ..."] + kept[-(limit - 3):]
    return "\n".join(kept)


def _error_payload(exc):
    message = str(exc).strip() or type(exc).__name__
    payload = {
        "type": type(exc).__name__,
        "message": message.splitlines()[0][:2000] if message else type(exc).__name__,
        "traceback": _summarize_traceback(exc),
    }
    data = getattr(exc, "tf_data", None)
    if data is not None:
        payload["data"] = data
    return payload


def _lower_priority():
    # Compile workers run below the measuring worker's priority: with every core compiling,
    # the process that launches the timed kernels must not wait for a core between its
    # start event and the kernel (that gap would be timed).
    nice = os.environ.get("TRITONFORGE_WORKER_NICE", "")
    if nice.isdigit() and int(nice) > 0 and hasattr(os, "nice"):
        try:
            os.nice(int(nice))
        except OSError:
            pass


def main():
    _lower_priority()
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    out = os.fdopen(proto_fd, "w", buffering=1, encoding="utf-8")

    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError as exc:
            reply = {"v": PROTOCOL_VERSION, "id": None, "ok": False,
                     "error": {"type": "ProtocolError", "message": f"request is not JSON: {exc}"}}
            out.write(json.dumps(reply) + "\n")
            continue
        rid = request.get("id")
        op = request.get("op")
        if op == "shutdown":
            break
        exit_after = False
        try:
            if request.get("v") != PROTOCOL_VERSION:
                raise ValueError(f"protocol version {request.get('v')} is not {PROTOCOL_VERSION}")
            result = dispatch(op, request.get("args") or {})
            reply = {"v": PROTOCOL_VERSION, "id": rid, "ok": True, "result": result}
        except BaseException as exc:  # every failure is a reply, never a dead pipe
            if isinstance(exc, KeyboardInterrupt):
                raise
            reply = {"v": PROTOCOL_VERSION, "id": rid, "ok": False, "error": _error_payload(exc)}
            if isinstance(exc, FatalWorkerError) or is_context_fatal(exc):
                reply["error"]["fatal"] = True
                exit_after = True
        try:
            text = json.dumps(reply, allow_nan=False, default=str)
        except ValueError:
            text = json.dumps(_sanitize(reply), default=str)
        out.write(text + "\n")
        out.flush()
        if exit_after:
            sys.stderr.write("tritonforge worker: CUDA context is no longer usable; exiting\n")
            sys.stderr.flush()
            os._exit(3)


def _sanitize(obj):
    if isinstance(obj, float):
        if obj != obj:
            return "nan"
        if obj in (float("inf"), float("-inf")):
            return "inf" if obj > 0 else "-inf"
        return obj
    if isinstance(obj, dict):
        return {k: _sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_sanitize(v) for v in obj]
    return obj

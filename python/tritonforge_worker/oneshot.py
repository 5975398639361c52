"""One request, one process: `python3 -m tritonforge_worker --oneshot REQUEST.json [--out REPLY.json]`.

For tools that must start the process themselves, Nsight Compute above all: `ncu ... python3 -m
tritonforge_worker --oneshot req.json --out reply.json` profiles exactly what the request
launches (the `profile_launch` op brackets one launcher call with cudaProfilerStart/Stop).

REQUEST.json holds {"op": "...", "args": {...}} (a "v" key, if present, must be the protocol
version). The reply, {"ok": true, "result": {...}} or {"ok": false, "error": {...}} as in the
JSON-lines protocol, goes to --out (written whole, through a rename) or else to stdout. Exit
code 0 when the op succeeded, 1 when it failed, 2 when the request file is unusable.
"""

import argparse
import json
import os
import sys

from . import PROTOCOL_VERSION


def _write(path, text):
    if not path:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    os.replace(tmp, path)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m tritonforge_worker",
                                     description="Runs one worker request from a file.")
    parser.add_argument("--oneshot", required=True, metavar="REQUEST.json")
    parser.add_argument("--out", metavar="REPLY.json", help="where the reply goes (default: stdout)")
    opts = parser.parse_args(argv)

    from .server import _error_payload, _sanitize

    try:
        with open(opts.oneshot, encoding="utf-8") as f:
            request = json.load(f)
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            raise ValueError("expected an object with an 'op' string")
        if "v" in request and request["v"] != PROTOCOL_VERSION:
            raise ValueError(f"protocol version {request['v']} is not {PROTOCOL_VERSION}")
    except (OSError, ValueError) as exc:
        reply = {"v": PROTOCOL_VERSION, "ok": False,
                 "error": {"type": "RequestError", "message": f"{opts.oneshot}: {exc}"}}
        _write(opts.out, json.dumps(reply))
        return 2

    from .ops import dispatch

    try:
        result = dispatch(request["op"], request.get("args") or {})
        reply = {"v": PROTOCOL_VERSION, "ok": True, "result": result}
    except Exception as exc:  # the reply says what failed; the exit code says that it did
        reply = {"v": PROTOCOL_VERSION, "ok": False, "error": _error_payload(exc)}
    try:
        text = json.dumps(reply, allow_nan=False, default=str)
    except ValueError:
        text = json.dumps(_sanitize(reply), default=str)
    _write(opts.out, text)
    return 0 if reply["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())

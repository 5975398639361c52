"""A misbehaving stand-in for the worker, for the protocol tests.

    python3 fake_worker.py MODE

It answers hello (protocol 1, or 99 for MODE=bad-version), then for the next request:
  ok          answers {"echo": args}
  hang        never answers
  crash       dies with SIGSEGV
  exit        exits with code 7 after printing a Python traceback on stderr
  garbage     prints lines that are not JSON, forever
  noisy-ok    prints a few lines of garbage, then answers correctly
  stale-id    answers with a wrong id first, then the right one
  fatal       answers with an error marked fatal, then exits
"""

import json
import os
import signal
import sys
import time


def reply(rid, result=None, error=None):
    msg = {"v": 1, "id": rid, "ok": error is None}
    if error is None:
        msg["result"] = result
    else:
        msg["error"] = error
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main():
    mode = sys.argv[1]
    for line in sys.stdin:
        req = json.loads(line)
        rid, op = req["id"], req["op"]
        if op == "hello":
            reply(rid, {"protocol": 99 if mode == "bad-version" else 1, "gpu": None})
            continue
        if op == "shutdown":
            return
        if mode == "ok":
            reply(rid, {"echo": req["args"]})
        elif mode == "hang":
            time.sleep(3600)
        elif mode == "crash":
            sys.stderr.write("about to crash\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGSEGV)
        elif mode == "exit":
            sys.stderr.write('Traceback (most recent call last):\n  File "k.py", line 3, in f\n'
                             'RuntimeError: CUDA error: an illegal memory access was encountered\n')
            sys.stderr.flush()
            os._exit(7)
        elif mode == "garbage":
            while True:
                sys.stdout.write("this is not json\n")
                sys.stdout.flush()
        elif mode == "noisy-ok":
            sys.stdout.write("Compiling...\nwarning: something\n")
            reply(rid, {"echo": req["args"]})
        elif mode == "stale-id":
            reply(rid + 1000, {"stale": True})
            reply(rid, {"echo": req["args"]})
        elif mode == "fatal":
            reply(rid, error={"type": "FatalWorkerError", "message": "illegal address", "fatal": True,
                              "data": {"status": "crash"}})
            os._exit(3)


if __name__ == "__main__":
    main()

"""A small client for the worker protocol, for the Python tests: starts
`python -m tritonforge_worker` and sends requests."""

import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class Worker:
    def __init__(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen([sys.executable, "-u", "-m", "tritonforge_worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        self.next_id = 1

    def call(self, op, **args):
        rid = self.next_id
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"v": 1, "id": rid, "op": op, "args": args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        reply = json.loads(line)
        assert reply["id"] == rid
        return reply

    def close(self):
        try:
            self.proc.stdin.write(json.dumps({"v": 1, "id": 0, "op": "shutdown", "args": {}}) + "\n")
            self.proc.stdin.close()
        except Exception:
            pass
        self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self.proc.stderr.close()

"""A measurement worker that runs as a Ray actor: `tritonforge optimize --ray ADDRESS`.

The C++ core starts this module as the "worker" of a measurement lane. It speaks the worker's
JSON-lines protocol on stdin/stdout, like `python -m tritonforge_worker`, and relays every
request to an actor of the Ray cluster at ADDRESS. The actor holds one GPU (num_gpus=1; Ray
sets its CUDA_VISIBLE_DEVICES) and runs the real worker as a child process on its node, so a
candidate that crashes the worker costs that child, not the actor (as on one host).

Files: the request's absolute paths that exist here (the variant's source in the run's work
folder, the task's source and harness) are shipped with each request, up to 4 MiB each, and
written on the actor's node at the same path where missing or different. What those modules
import from elsewhere (sibling modules, a package) must be at the same path on every node
(a shared file system), and the worker package must be importable there (installed, or on
the PYTHONPATH this process forwards).

Failures: when the actor or its node dies under a request, the reply is an error of type
"WorkerLost" (the core marks the candidate not-run, never its fault, and measures it on
another lane); the next request, if any, gets a new actor. When the child worker dies under a
request (the candidate crashed it), the reply is a crash, as a local worker's death would be.
The actor is owned by this process: when the core kills it (a timeout), Ray kills the actor.

Environment:
  TRITONFORGE_RAY_ADDRESS     the cluster (ray.init address: "host:port", "auto")
  TRITONFORGE_RAY_NUM_GPUS    GPUs each actor asks for (default 1; 0 for CPU tests with the
                              fake GPU worker)
  TRITONFORGE_RAY_WORKER_CMD  the worker command on the actor's node, as a JSON list
                              (default [the actor's python, "-u", "-m", "tritonforge_worker"])
  TRITONFORGE_RAY_MODEL       a GPU model ("H200"): the actor asks for the node resource
                              accelerator_type:<model> where the cluster has it
  TRITONFORGE_RAY_DISCOVER    1: answer hello with the cluster's GPUs (count and models)
  TRITONFORGE_LANE            the lane (its index), for messages and the test hook
  TRITONFORGE_RAY_TEST_KILL   LANE:N: on lane LANE's N-th `run`, kill the actor as the request
                              is sent (tests of a lost worker)
Forwarded to the actor: PYTHONPATH, TRITONFORGE_* (but TRITONFORGE_RAY_*), TF_FAKE_*.
"""

import json
import os
import platform
import sys

MAX_SHIPPED_BYTES = 4 << 20


def _actor_env():
    env = {}
    for key, value in os.environ.items():
        if key == "PYTHONPATH" or key.startswith("TF_FAKE_") or (
                key.startswith("TRITONFORGE_") and not key.startswith("TRITONFORGE_RAY_")):
            env[key] = value
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if here not in paths:
        paths.insert(0, here)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def _collect_files(value, found):
    """Absolute paths of existing files anywhere in a request's arguments -> their bytes."""
    if isinstance(value, dict):
        for v in value.values():
            _collect_files(v, found)
    elif isinstance(value, list):
        for v in value:
            _collect_files(v, found)
    elif isinstance(value, str) and value.startswith("/") and len(value) < 4096 and value not in found:
        try:
            if os.path.isfile(value) and os.path.getsize(value) <= MAX_SHIPPED_BYTES:
                with open(value, "rb") as f:
                    found[value] = f.read()
        except OSError:
            pass
    return found


class WorkerHost:
    """The actor: one worker process on this node, restarted when it dies."""

    def __init__(self, cmd, env):
        import subprocess
        self._subprocess = subprocess
        self.cmd = cmd or [sys.executable, "-u", "-m", "tritonforge_worker"]
        self.env = dict(os.environ, **env)
        self.proc = None
        self.log_path = None

    def where(self):
        import ray
        return {"node_id": ray.get_runtime_context().get_node_id(), "hostname": platform.node(),
                "pid": os.getpid(), "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}

    def _write_files(self, files):
        for path, data in (files or {}).items():
            try:
                with open(path, "rb") as f:
                    if f.read() == data:
                        continue
            except OSError:
                pass
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.ray-{os.getpid()}"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)

    def _ensure(self):
        if self.proc is not None and self.proc.poll() is None:
            return
        import tempfile
        log = tempfile.NamedTemporaryFile(prefix="tritonforge-ray-worker-", suffix=".log", delete=False)
        self.log_path = log.name
        self.proc = self._subprocess.Popen(self.cmd, stdin=self._subprocess.PIPE, stdout=self._subprocess.PIPE,
                                           stderr=log, env=self.env, text=True, bufsize=1)
        log.close()

    def _stderr_tail(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-2000:].decode("utf-8", "replace")
        except (OSError, TypeError):
            return ""

    def call(self, line, files):
        """Relays one request line; returns (reply line, None), or (None, why) when the worker died."""
        self._write_files(files)
        self._ensure()
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            reply = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            reply = ""
        if not reply:
            code = self.proc.wait()
            self.proc = None
            return None, f"the worker exited with code {code} on the actor's node: {self._stderr_tail().strip()[-400:]}"
        return reply.rstrip("\n"), None

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"op": "shutdown"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=2)
            except Exception:
                self.proc.kill()
        return True


def _lost_errors(ray):
    names = ("RayActorError", "ActorDiedError", "ActorUnavailableError", "WorkerCrashedError", "NodeDiedError",
             "ObjectLostError", "OwnerDiedError", "LocalRayletDiedError")
    return tuple(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n))


class Bridge:
    def __init__(self, ray):
        self.ray = ray
        self.lost = _lost_errors(ray)
        self.num_gpus = float(os.environ.get("TRITONFORGE_RAY_NUM_GPUS", "1"))
        cmd = os.environ.get("TRITONFORGE_RAY_WORKER_CMD")
        self.cmd = json.loads(cmd) if cmd else None
        self.lane = os.environ.get("TRITONFORGE_LANE", "0")
        self.actor = None
        self.where = None
        self.runs = 0
        kill = os.environ.get("TRITONFORGE_RAY_TEST_KILL", "")
        self.kill_at = None
        if ":" in kill and kill.split(":", 1)[0] == self.lane:
            self.kill_at = int(kill.split(":", 1)[1])

    def _options(self):
        opts = {"num_gpus": self.num_gpus, "num_cpus": 0, "max_restarts": 0,
                "runtime_env": {"env_vars": _actor_env()}}
        model = os.environ.get("TRITONFORGE_RAY_MODEL")
        if model and self.num_gpus > 0:
            key = f"accelerator_type:{model}"
            if key in self.ray.cluster_resources():
                opts["resources"] = {key: 0.001}
        return opts

    def _actor(self):
        if self.actor is None:
            cls = self.ray.remote(WorkerHost)
            self.actor = cls.options(**self._options()).remote(self.cmd, {})
            self.where = self.ray.get(self.actor.where.remote())
        return self.actor

    def _wait_dead(self, actor, timeout_s=30.0):
        import time
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            try:
                self.ray.get(actor.where.remote(), timeout=1.0)
            except self.lost:
                return
            except Exception:  # a timeout: not answered, not known dead yet
                pass
            time.sleep(0.05)

    def relay(self, raw, req):
        op = req.get("op")
        files = _collect_files(req.get("args") or {}, {})
        try:
            actor = self._actor()
            if op == "run":
                self.runs += 1
                if self.kill_at is not None and self.runs == self.kill_at:
                    # Killed before the request reaches it: killed after, a fast `run` could
                    # answer first (it did once in CI), and the test would see no loss. ray.kill
                    # only asks: wait until the actor answers no more (it once answered one more
                    # call in CI, on a loaded machine).
                    self.ray.kill(actor, no_restart=True)
                    self._wait_dead(actor)
            ref = actor.call.remote(raw, files)
            line, died = self.ray.get(ref)
        except self.lost as exc:
            self.actor = None
            return _error(req, "WorkerLost", f"the Ray actor of lane {self.lane} was lost: "
                          f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")
        if died is not None:
            return _error(req, "WorkerCrashed", died, {"status": "crash"})
        if op == "hello":
            reply = json.loads(line)
            if isinstance(reply.get("result"), dict):
                reply["result"]["ray"] = dict(self.where or {}, address=os.environ.get("TRITONFORGE_RAY_ADDRESS"),
                                              lane=self.lane)
            return json.dumps(reply)
        return line

    def discover(self, raw, req):
        """hello of the discovery process: the cluster's GPUs as one hello's device list."""
        from . import PROTOCOL_VERSION
        if self.num_gpus <= 0:
            # CPU tests: one actor's worker says what it has (the fake GPU worker's devices).
            reply = self.relay(raw, req)
            self.close()
            return reply
        from .ops import op_hello
        info = op_hello({"probe_torch": False})
        names = []
        for node in self.ray.nodes():
            if not node.get("Alive"):
                continue
            res = node.get("Resources") or {}
            kinds = [k.split(":", 1)[1] for k in res if k.startswith("accelerator_type:")]
            names += [kinds[0] if kinds else "GPU"] * int(res.get("GPU", 0))
        if names:
            info["gpu"] = {"name": names[0], "device_count": len(names),
                           "devices": [{"index": i, "name": n} for i, n in enumerate(names)]}
        else:
            info["gpu"] = None
            info["gpu_reason"] = "the Ray cluster has no GPU"
        return json.dumps({"v": PROTOCOL_VERSION, "id": req.get("id"), "ok": True, "result": info})

    def close(self):
        if self.actor is not None:
            try:
                self.ray.get(self.actor.stop.remote(), timeout=5)
            except Exception:
                pass
            try:
                self.ray.kill(self.actor)
            except Exception:
                pass
            self.actor = None


def _error(req, kind, message, data=None):
    from . import PROTOCOL_VERSION
    err = {"type": kind, "message": message}
    if data is not None:
        err["data"] = data
    return json.dumps({"v": PROTOCOL_VERSION, "id": req.get("id"), "ok": False, "error": err})


def _unreachable(address):
    """Why a host:port address does not answer (ray.init would retry for minutes), or None."""
    import socket
    if address == "auto" or "://" in address or ":" not in address:
        return None
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        return f"'{port}' is not a port"
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        return str(exc) or type(exc).__name__
    return None


def main():
    # Ray and its logging may print to stdout: the protocol gets a private copy of it.
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from . import PROTOCOL_VERSION
    try:
        import ray
    except ImportError:
        sys.stderr.write("tritonforge ray bridge: Ray is not installed (pip install 'tritonforge[ray]' or ray)\n")
        sys.exit(3)
    address = os.environ.get("TRITONFORGE_RAY_ADDRESS") or "auto"
    problem = _unreachable(address)
    if problem:
        sys.stderr.write(f"tritonforge ray bridge: cannot reach the Ray cluster at {address}: {problem}\n")
        sys.exit(3)
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False, configure_logging=False)
    except Exception as exc:
        sys.stderr.write(f"tritonforge ray bridge: cannot connect to the Ray cluster at {address}: {exc}\n")
        sys.exit(3)
    bridge = Bridge(ray)
    discover = os.environ.get("TRITONFORGE_RAY_DISCOVER") == "1"
    try:
        for raw in sys.stdin:
            raw = raw.strip()
            if not raw:
                continue
            try:
                req = json.loads(raw)
            except ValueError as exc:
                out.write(json.dumps({"v": PROTOCOL_VERSION, "id": None, "ok": False,
                                      "error": {"type": "ProtocolError", "message": f"request is not JSON: {exc}"}})
                          + "\n")
                continue
            if req.get("op") == "shutdown":
                break
            if discover and req.get("op") == "hello":
                reply = bridge.discover(raw, req)
            else:
                reply = bridge.relay(raw, req)
            out.write(reply + "\n")
            out.flush()
    finally:
        bridge.close()
        ray.shutdown()


if __name__ == "__main__":
    main()

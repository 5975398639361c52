"""`--ray ADDRESS`: measurement workers as Ray actors, on a local Ray cluster (127.0.0.1, CPU
only) with the fake GPU worker (tests/worker_fakes). One cluster serves the whole module (a
start costs seconds). Skipped, with the reason printed (pytest -ra), where Ray is not
installed (pip install ray; CI installs it from python/requirements-test.txt).

Shown here: the bridge relays the worker protocol to an actor; an actor killed under a
request is reported as WorkerLost (not the candidate's failure) and the next request gets a
new actor; `optimize --ray ... --gpus 2` spreads candidates over two actors, and when one is
killed mid-run the run completes on the other, blames no candidate, and keeps every stored
measurement.
"""

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

try:
    import ray  # noqa: F401
except ImportError as exc:  # skipped, saying why (pytest -ra prints it)
    pytest.skip(f"Ray is not importable ({exc}): pip install ray to run the --ray tests", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "worker_fakes" / "fake_gpu_python"
BINARY = Path(os.environ.get("TRITONFORGE_BINARY_DIR", ROOT / "build")) / "tritonforge"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_cli():
    exe = Path(sys.executable).with_name("ray")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "ray.scripts.scripts"]


@pytest.fixture(scope="module")
def cluster():
    """A head node of its own (`ray start --block` in a new session): stopped by ending that
    session, so that no other Ray cluster of the machine is touched (`ray stop` would)."""
    temp = tempfile.mkdtemp(prefix="tfray", dir="/tmp")  # short: Ray's socket paths are limited
    port = _free_port()
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    log = open(os.path.join(temp, "head.log"), "w")
    head = subprocess.Popen(_ray_cli() + ["start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1",
                                          "--num-cpus=2", "--num-gpus=0", "--include-dashboard=false",
                                          "--disable-usage-stats", f"--temp-dir={temp}"],
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while head.poll() is None and time.time() < deadline:  # the GCS port first (cheap to poll)
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        while True:
            ready = subprocess.run([sys.executable, "-c", f"import ray; ray.init(address={address!r}); ray.shutdown()"],
                                   env=env, capture_output=True, timeout=120)
            if ready.returncode == 0:
                break
            if head.poll() is not None or time.time() > deadline:
                pytest.fail(f"the Ray head did not start: {open(log.name).read()[-2000:]}")
            time.sleep(1)
        yield address
    finally:
        try:
            os.killpg(head.pid, signal.SIGTERM)
            head.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(head.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _bridge_env(address, **extra):
    env = dict(os.environ)
    env.update({"PYTHONPATH": str(ROOT / "python"), "TRITONFORGE_RAY_ADDRESS": address,
                "TRITONFORGE_RAY_NUM_GPUS": "0", "TRITONFORGE_RAY_WORKER_CMD": json.dumps([str(FAKE)]),
                "TF_FAKE_REAL_PYTHON": sys.executable, "TF_FAKE_RUN_S": "0.001"})
    env.update(extra)
    return env


class Bridge:
    def __init__(self, env):
        self.p = subprocess.Popen([sys.executable, "-u", "-m", "tritonforge_worker.ray_bridge"], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.next = 1

    def call(self, op, args):
        from tritonforge_worker import PROTOCOL_VERSION
        self.p.stdin.write(json.dumps({"v": PROTOCOL_VERSION, "id": self.next, "op": op, "args": args}) + "\n")
        self.p.stdin.flush()
        self.next += 1
        return json.loads(self.p.stdout.readline())

    def close(self):
        self.p.stdin.write(json.dumps({"op": "shutdown"}) + "\n")
        self.p.stdin.flush()
        assert self.p.wait(timeout=60) == 0


def test_bridge_relays_and_reports_a_killed_actor_as_worker_lost(cluster, tmp_path):
    variant = tmp_path / "variant.py"
    variant.write_text("# a variant\n")
    bridge = Bridge(_bridge_env(cluster, TRITONFORGE_LANE="0", TRITONFORGE_RAY_TEST_KILL="0:2"))
    try:
        hello = bridge.call("hello", {"probe_torch": False})
        assert hello["ok"], hello
        assert hello["result"]["gpu"]["name"] == "Fake GPU"
        assert hello["result"]["ray"]["address"] == cluster
        run = {"variant": {"path": str(variant), "module": "v"}, "case": {"N": 16}, "timing": {"budget_ms": 1}}
        first = bridge.call("run", run)
        assert first["ok"] and first["result"]["status"] == "ok", first
        lost = bridge.call("run", run)  # the hook kills the actor under this one
        assert not lost["ok"]
        assert lost["error"]["type"] == "WorkerLost", lost
        again = bridge.call("run", run)  # a new actor
        assert again["ok"] and again["result"]["timing"]["median_ms"] == first["result"]["timing"]["median_ms"]
    finally:
        bridge.close()


def _task(tmp_path):
    (tmp_path / "add.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    pid = tl.program_id(0)\n    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n"
        "    x = tl.load(x_ptr + offs, mask=mask)\n    y = tl.load(y_ptr + offs, mask=mask)\n"
        "    tl.store(out_ptr + offs, x + y, mask=mask)\n\n\n"
        "def add(x, y):\n    out = x.new_empty(x.shape)\n    n = x.numel()\n"
        "    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)\n    return out\n")
    (tmp_path / "add_harness.py").write_text(
        "def make_inputs(case, seed):\n    raise NotImplementedError\n\n\ndef reference(x, y):\n    return x + y\n")
    (tmp_path / "task.toml").write_text(
        'name = "add"\nsource = "add.py"\nlauncher = "add"\nharness = "add_harness.py"\n'
        "cases = [ { N = 1048576 }, { N = 4096, scale = 2 } ]\n")
    return tmp_path / "task.toml"


@pytest.mark.skipif(not BINARY.exists(), reason=f"{BINARY} is not built")
def test_optimize_over_two_actors_survives_a_killed_one(cluster, tmp_path):
    task = _task(tmp_path)
    log = tmp_path / "runs.jsonl"
    db = tmp_path / "results.sqlite"
    env = _bridge_env(cluster, TF_FAKE_GPUS="2", TF_FAKE_GPU_LOG=str(log), TRITONFORGE_RAY_TEST_KILL="1:4",
                      TF_FAKE_RUN_S="0.02")
    env.pop("PYTHONPATH")
    p = subprocess.run([str(BINARY), "--python", str(FAKE), "optimize", str(task), "--ray", cluster, "--gpus", "2",
                        "--out", str(tmp_path / "out"), "--db", str(db), "--jobs", "2", "--no-passes",
                        "--strategy", "exhaustive", "--max-candidates", "16", "--stall-rounds", "0", "--budget", "120",
                        "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    result = json.loads(p.stdout)
    lanes = result["gpus"]
    assert [x["lane"] for x in lanes] == [0, 1]
    assert lanes[1]["alive"] is False and lanes[0]["alive"] is True, lanes
    lost = [e["data"] for e in result["trace"] if e["kind"] == "lane-lost"]
    assert len(lost) == 1 and lost[0]["lane"] == 1, lost
    # No candidate is blamed for the lost actor; the one it held was measured again on lane 0.
    statuses = {c["status"] for c in result["candidates"]}
    assert not statuses & {"crash", "runtime-error", "timeout"}, statuses
    requeued = lost[0]["candidate"]
    [again] = [c for c in result["candidates"] if c["id"] == requeued]
    assert again["status"] == "ok" and again.get("lane", 0) == 0, again
    assert any("was dropped" in n for n in result["notes"]), result["notes"]
    # Both actors measured (the log's lines come from two worker processes on the actors).
    pids = {json.loads(line)["pid"] for line in log.read_text().splitlines()}
    assert len(pids) >= 2
    # Every measured candidate's cases are in the one results database.
    with sqlite3.connect(db) as con:
        stored = {row[0] for row in con.execute("select distinct variant_hash from measurements")}
    measured = {c["source_hash"] for c in result["candidates"] if c["status"] == "ok" and not c["reused"]}
    assert measured <= stored

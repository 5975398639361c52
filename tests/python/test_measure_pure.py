"""The worker's measurement helpers that need no GPU: tolerances per dtype, timing
statistics, grid normalization, and the one-shot mode that ncu runs."""

import json
import os
import subprocess
import sys

import pytest

from tritonforge_worker import runner


def test_default_tolerances_per_dtype():
    assert runner.tolerance_for("float32") == (1e-4, 1e-5)
    assert runner.tolerance_for("torch.float16") == (2e-3, 2e-3)
    assert runner.tolerance_for("bfloat16") == (1.6e-2, 1.6e-2)
    assert runner.tolerance_for("float64") == (1e-7, 1e-7)
    assert runner.tolerance_for("int32") == (0.0, 0.0)
    assert runner.tolerance_for("bool") == (0.0, 0.0)
    assert runner.tolerance_for("float8_e4m3fn") == (0.125, 0.125)


def test_task_tolerances_override_either_default():
    assert runner.tolerance_for("float16", rtol=1e-2) == (1e-2, 2e-3)
    assert runner.tolerance_for("float16", atol=0) == (2e-3, 0.0)
    assert runner.tolerance_for("float32", 5e-3, 1e-3) == (5e-3, 1e-3)


def test_quantiles_interpolate():
    assert runner._quantiles([4.0]) == (4.0, 4.0, 4.0)
    assert runner._quantiles([1.0, 2.0, 3.0, 4.0, 5.0]) == (2.0, 3.0, 4.0)
    q1, med, q3 = runner._quantiles([4.0, 1.0, 3.0, 2.0])
    assert (q1, med, q3) == (1.75, 2.5, 3.25)


def test_summarize_times_reports_noise():
    s = runner.summarize_times([1.0, 1.0, 1.1, 0.9, 1.0, 5.0], "events+l2flush")
    assert s["median_ms"] == 1.0
    assert s["reps"] == 6
    assert s["method"] == "events+l2flush"
    assert s["min_ms"] == 0.9 and s["max_ms"] == 5.0
    assert s["iqr_ms"] == pytest.approx(s["q3_ms"] - s["q1_ms"])
    assert s["noise"] == pytest.approx(s["iqr_ms"] / 1.0)
    # An outlier moves the mean, not the median.
    assert s["mean_ms"] == pytest.approx(10.0 / 6)


def test_grid_tuple():
    assert runner._grid_tuple((8,)) == [8, 1, 1]
    assert runner._grid_tuple((4, 2)) == [4, 2, 1]
    assert runner._grid_tuple(7) == [7, 1, 1]
    assert runner._grid_tuple(("x",)) is None


def _oneshot(tmp_path, request, out=True):
    req = tmp_path / "req.json"
    req.write_text(json.dumps(request) if not isinstance(request, str) else request)
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "..", "python"))
    cmd = [sys.executable, "-m", "tritonforge_worker", "--oneshot", str(req)]
    reply_path = tmp_path / "reply.json"
    if out:
        cmd += ["--out", str(reply_path)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    text = reply_path.read_text() if out else p.stdout
    return p.returncode, json.loads(text)


def test_oneshot_runs_one_request_into_a_file(tmp_path):
    rc, reply = _oneshot(tmp_path, {"op": "echo", "args": {"x": [1, 2]}})
    assert rc == 0
    assert reply == {"v": 1, "ok": True, "result": {"echo": {"x": [1, 2]}}}


def test_oneshot_to_stdout_and_hello_without_torch(tmp_path):
    rc, reply = _oneshot(tmp_path, {"v": 1, "op": "hello", "args": {"probe_torch": False}}, out=False)
    assert rc == 0
    assert reply["result"]["protocol"] == 1
    assert reply["result"]["gpu_reason"] == "not probed"


def test_oneshot_failures_are_replies_with_exit_codes(tmp_path):
    rc, reply = _oneshot(tmp_path, {"op": "no-such-op"})
    assert rc == 1
    assert reply["ok"] is False
    assert reply["error"]["message"] == "unknown op 'no-such-op'"
    rc, reply = _oneshot(tmp_path, "this is not json")
    assert rc == 2
    assert reply["error"]["type"] == "RequestError"
    rc, reply = _oneshot(tmp_path, {"v": 99, "op": "echo"})
    assert rc == 2
    assert "protocol version 99" in reply["error"]["message"]


def test_in_place_indices_that_name_no_input_are_a_task_error():
    runner.check_in_place([0, 2], 3)  # both name inputs
    with pytest.raises(runner.TaskError) as info:
        runner.check_in_place([0, 3], 3)
    assert str(info.value) == ("check.in_place[1] = 3 names no input: make_inputs returned 3 inputs "
                               "(indices 0 to 2)")
    assert info.value.tf_data == {"key": "check.in_place[1]", "index": 3, "inputs": 3}
    with pytest.raises(runner.TaskError) as info:
        runner.check_in_place([-1], 2)
    assert info.value.tf_data["index"] == -1
    with pytest.raises(runner.TaskError) as info:
        runner.check_in_place([0], 0)
    assert "returned 0 inputs (no index is valid)" in str(info.value)


def test_task_error_reply_names_type_and_key():
    # What the core sees: an error reply of type TaskError whose message names the key.
    from tritonforge_worker.server import _error_payload
    try:
        runner.check_in_place([5], 2)
    except runner.TaskError as exc:
        payload = _error_payload(exc)
    assert payload["type"] == "TaskError"
    assert payload["message"].startswith("check.in_place[0] = 5 names no input: make_inputs returned 2 inputs")
    assert payload["data"] == {"key": "check.in_place[0]", "index": 5, "inputs": 2}


class _FakeHarness:
    """make_inputs raises CUDA out-of-memory `fails` times, then returns one tensor."""

    def __init__(self, fails):
        self.fails = fails
        self.calls = 0
        self.module = None

    def make_inputs(self, case, seed):
        import torch
        self.calls += 1
        if self.calls <= self.fails:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 3.91 GiB.")
        return [torch.zeros(4)]


def _warm_with(monkeypatch, harness, launcher, wait_s):
    import torch
    monkeypatch.setattr(runner, "_prepare", lambda args: (harness, "h.py", None, launcher))
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(runner.time, "sleep", lambda s: None)
    return runner.op_warm({"cases": [{"n": 4}], "memory_wait_s": wait_s})


def test_warm_waits_for_gpu_memory_held_by_others(monkeypatch):
    pytest.importorskip("torch")
    harness = _FakeHarness(fails=3)
    seen = []
    reply = _warm_with(monkeypatch, harness, lambda x: seen.append(x), wait_s=30)
    assert reply["status"] == "ok"
    assert harness.calls == 4 and len(seen) == 1


def test_warm_that_never_gets_memory_is_not_run_not_the_variants_fault(monkeypatch):
    pytest.importorskip("torch")
    harness = _FakeHarness(fails=10**6)
    clock = iter(range(0, 10**6, 5))
    monkeypatch.setattr(runner.time, "time", lambda: float(next(clock)))
    reply = _warm_with(monkeypatch, harness, lambda x: None, wait_s=20)
    assert reply["status"] == "not-run"
    assert "held by other processes" in reply["message"]


def test_warm_keeps_other_failures_as_they_are(monkeypatch):
    pytest.importorskip("torch")

    def launcher(x):
        raise ValueError("shapes (4,) and (8,) do not match")

    reply = _warm_with(monkeypatch, _FakeHarness(fails=0), launcher, wait_s=30)
    assert reply["status"] == "runtime-error"


def test_warm_keeps_no_inputs_between_requests(monkeypatch):
    pytest.importorskip("torch")
    before = len(runner._CACHE.entries)
    _warm_with(monkeypatch, _FakeHarness(fails=0), lambda x: None, wait_s=0)
    assert len(runner._CACHE.entries) == before


class _OutOfResources(Exception):
    pass


_OutOfResources.__name__ = "OutOfResources"


class _Compiled:
    def __init__(self, error=None):
        self.error = error

    def _init_handles(self):
        if self.error is not None:
            raise self.error


def test_an_autotune_config_out_of_shared_memory_is_skipped_when_another_loads():
    from tritonforge_worker.runner import load_compiled
    tuned, plain = object(), object()
    oor = _OutOfResources("out of resource: shared memory, Required: 245760, Hardware limit: 232448")
    records = [(tuned, _Compiled(oor), None), (tuned, _Compiled(), (4, 1, 1)), (plain, _Compiled(), None)]
    kept, err = load_compiled(records)
    assert err is None
    assert [r[1] for r in kept] == [records[1][1], records[2][1]]
    # Every config of a kernel out of resources: the variant is.
    kept, err = load_compiled([(tuned, _Compiled(oor), None), (tuned, _Compiled(oor), None)])
    assert kept is None and err is oor
    # Any other load error fails the variant at once.
    bad = RuntimeError("CUDA error: an illegal instruction")
    kept, err = load_compiled([(tuned, _Compiled(), None), (tuned, _Compiled(bad), None)])
    assert kept is None and err is bad


def test_autotuned_kernels_of_sibling_modules_tune_again_for_another_variant(tmp_path, monkeypatch):
    import types
    from tritonforge_worker import modules
    autotuner_mod = pytest.importorskip("triton.runtime.autotuner")

    class FakeAutotuner(autotuner_mod.Autotuner):
        def __init__(self):  # no kernel behind it: only the cache matters here
            self.cache = {("key",): "config tuned for the last variant"}

    class Heuristics:
        def __init__(self, fn):
            self.fn = fn

    inside, outside, keep = FakeAutotuner(), FakeAutotuner(), FakeAutotuner()
    wrapped = FakeAutotuner()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    sibling = types.ModuleType("tf_test_sibling")
    sibling.__file__ = str(pkg / "kernels.py")
    sibling.kernel, sibling.heuristic = inside, Heuristics(wrapped)
    elsewhere = types.ModuleType("tf_test_elsewhere")
    elsewhere.__file__ = str(tmp_path / "other" / "k.py")
    elsewhere.kernel = outside
    variant = types.ModuleType("tf_test_variant")
    variant.__file__ = str(pkg / "variant.py")
    variant.kernel = keep
    for m in (sibling, elsewhere, variant):
        monkeypatch.setitem(sys.modules, m.__name__, m)
    assert modules.reset_shared_autotuners([str(pkg)], keep=variant) == 2
    assert inside.cache == {} and wrapped.cache == {}
    assert outside.cache and keep.cache  # outside the roots, and the variant's own: kept


class _FakeCuda:
    """torch.cuda's event, sleep and synchronize on a simulated GPU clock: each queued item
    runs when the GPU is free and the host has queued it, so an idle GPU waiting for the host
    shows in the events' difference, as on a real GPU."""

    def __init__(self, host_ms_per_call, kernel_ms):
        self.host_ms, self.kernel_ms = host_ms_per_call, kernel_ms
        self.host = 0.0   # the host's clock (ms)
        self.gpu = 0.0    # when the GPU is free
        self.queue = []   # what ran, in order

    def _run(self, what, ms):
        self.gpu = max(self.gpu, self.host) + ms
        self.queue.append(what)
        return self.gpu

    def launch(self):
        self.host += self.host_ms
        self._run("kernel", self.kernel_ms)

    def Event(self, enable_timing=True):
        cuda = self

        class E:
            def record(self):
                self.t = cuda._run("event", 0.0)

            def elapsed_time(self, other):
                return other.t - self.t
        return E()

    def _sleep(self, cycles):
        self._run("sleep", cycles / 1000.0)

    def synchronize(self):
        self.host = max(self.host, self.gpu)


def _fake_timing(monkeypatch, host_ms, kernel_ms):
    import types
    cuda = _FakeCuda(host_ms, kernel_ms)
    fake_torch = types.SimpleNamespace(cuda=cuda)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setattr(runner, "_sleep_cycles_per_ms", lambda: 1000.0)
    monkeypatch.setattr(runner.time, "perf_counter", lambda: cuda.host / 1e3)
    return cuda


def test_timing_queues_each_call_ahead_of_a_slow_host(monkeypatch):
    # A 0.05 ms kernel behind 0.2 ms of launcher Python: timed without the head start, the
    # GPU waits for the host inside the interval; with it, the kernel alone is timed.
    cuda = _fake_timing(monkeypatch, host_ms=0.2, kernel_ms=0.05)
    times = runner._time_events(cuda.launch, 5.0, 10, 50, False, ahead=True)
    assert len(times) >= 10
    assert max(times) == pytest.approx(0.05)
    assert cuda.queue.count("sleep") == len(times)
    cuda = _fake_timing(monkeypatch, host_ms=0.2, kernel_ms=0.05)
    late = runner._time_events(cuda.launch, 5.0, 10, 50, False, ahead=False)
    assert min(late) == pytest.approx(0.2)
    assert "sleep" not in cuda.queue


def test_launcher_timeline_splits_the_profiled_events(monkeypatch):
    """The timeline's arithmetic over profiler events, with stand-ins for torch.profiler and
    the launch records (the profile itself needs a GPU: test_worker_gpu.py): the Triton
    kernel's time, torch's kernels and copies grouped by name and ranked, the launcher's host
    syncs (not the one the timeline makes itself)."""
    import contextlib
    import types

    import torch
    import torch.profiler
    from torch.autograd import DeviceType

    def event(name, device, us):
        return types.SimpleNamespace(name=name, device_type=device,
                                     time_range=types.SimpleNamespace(elapsed_us=lambda: us))

    events = [event("add_kernel", DeviceType.CUDA, 100), event("reduce_kernel", DeviceType.CUDA, 40),
              event("reduce_kernel", DeviceType.CUDA, 20), event("Memcpy DtoH (Device -> Pageable)", DeviceType.CUDA, 5),
              event("aten::max", DeviceType.CPU, 3), event("cudaStreamSynchronize", DeviceType.CPU, 1),
              event("cudaDeviceSynchronize", DeviceType.CPU, 1)]

    class Profile:
        def __init__(self, **kw):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def events(self):
            return events

    @contextlib.contextmanager
    def recording():
        yield [(None, types.SimpleNamespace(metadata=types.SimpleNamespace(name="add_kernel")), None)]

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.profiler, "profile", Profile)
    monkeypatch.setattr(runner, "_recording", recording)
    t = runner._launcher_timeline(lambda: None)
    assert t["triton_ms"] == pytest.approx(0.1) and t["triton_launches"] == 1
    assert t["other_ms"] == pytest.approx(0.06) and t["copy_ms"] == pytest.approx(0.005)
    assert t["gpu_ms"] == pytest.approx(0.165)
    assert [(o["name"], o["kind"], o["count"]) for o in t["outside"]] == [
        ("reduce_kernel", "other", 2), ("Memcpy DtoH (Device -> Pageable)", "copy", 1)]
    assert t["outside"][0]["ms"] == pytest.approx(0.06)
    assert t["host_syncs"] == 1

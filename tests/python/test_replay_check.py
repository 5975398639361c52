"""`capture --optimize` replays each task twice as written before the search (the replay check,
src/capture/replay_check.h), here through `capture --from DIR --optimize` on the CPU under
Triton's interpreter: the replays run, the search then stops with exit 3 (no GPU). The kernels'
launchers are given planted behaviours: noise small enough to widen `atol`, noise too large to
accept, a deterministic offset (state that was not saved), a launcher that raises."""

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from capture_cli import BINARY, capture_copy
from capture_cli import tool as capture_tool

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not BINARY.exists(), reason=f"{BINARY} not built")


def tool(*args, cwd):
    return capture_tool(*args, cwd=cwd, TRITONFORGE_REPLAY_DEVICE="cpu")


@pytest.fixture
def captured(tmp_path):
    return capture_copy(tmp_path)


def plant(cap, task, body):
    """Wraps the task's replay launcher: it launches as captured, then runs `body` (with `outs`,
    the in-place outputs, and `torch`)."""
    folder = cap / "tasks" / task
    replay = json.loads((folder / "replay.json").read_text())
    source = folder / Path(replay["source"]).name
    name = replay["launcher"]
    kept = source.with_suffix(".as-captured")  # each plant starts from the task's source as written
    if not kept.exists():
        shutil.copy(source, kept)
    text = kept.read_text().replace(f"def {name}(", "def _planted_original(")
    source.write_text(text + f"""

import os as _os
import torch
# Not the global generator: the replay seeds that alike before each run, as a program's own
# seeded randomness would be; this stands for what no seed fixes (atomics, a race).
_planted = torch.Generator().manual_seed(int.from_bytes(_os.urandom(4), "little"))


def {name}(*args):
    _planted_original(*args)
    outs = [args[i] for i in {replay["in_place"]}]
{body}
""")


def verdict(cap, task):
    return json.loads((cap / "tasks" / task / "replay_check.json").read_text())


def atol_of(cap, task):
    return float(re.search(r"^atol = (\S+)$", (cap / "tasks" / task / "task.toml").read_text(), re.M).group(1))


def test_kernels_as_written_reproduce_the_run_bit_for_bit(captured):
    where, cap = captured
    proc = tool("capture", "--from", "cap", "--optimize", "--budget", "5", cwd=where)
    assert proc.returncode == 3, proc.stdout + proc.stderr  # the search needs a GPU
    for task in ("add_kernel", "scale_kernel", "shift_kernel"):
        v = verdict(cap, task)
        assert v["verdict"] == "reproduced", v
        assert f"{task} replayed as written: reproduced: 2 replays" in proc.stderr
        assert all(len(c["runs"]) == 2 for c in v["reply"]["cases"])


def test_small_noise_widens_atol_and_large_noise_or_an_offset_is_not_replayable(captured):
    where, cap = captured
    # add_kernel: noise up to 0.25 * rtol * the largest output, with atol made tiny first: the
    # replays differ from each other and from the run by more than atol, less than rtol allows.
    task_toml = cap / "tasks" / "add_kernel" / "task.toml"
    task_toml.write_text(re.sub(r"^atol = .*$", "atol = 1e-09", task_toml.read_text(), flags=re.M))
    plant(cap, "add_kernel", "    for o in outs:\n        o += (torch.rand(o.shape, generator=_planted) - 0.5) * 0.5e-4 * o.abs().max()")
    # scale_kernel: noise far beyond the tolerance.
    plant(cap, "scale_kernel", "    for o in outs:\n        o += torch.rand(o.shape, generator=_planted) * 0.1 * o.abs().max()")
    # shift_kernel: the same offset in every replay: the replays agree, the run does not.
    plant(cap, "shift_kernel", "    for o in outs:\n        o += 0.5 * o.abs().max()")
    proc = tool("capture", "--from", "cap", "--optimize", "--budget", "5", cwd=where)
    assert proc.returncode == 3, proc.stdout + proc.stderr

    add = verdict(cap, "add_kernel")
    assert add["verdict"] == "widened", add
    assert 1e-9 < atol_of(cap, "add_kernel") <= 1e-4 * 2000 * 2  # rtol 1e-4, the largest output about 2e3
    assert atol_of(cap, "add_kernel") == pytest.approx(add["atol"], rel=1e-5)
    assert "# widened by the replay check" in task_toml.read_text()
    assert "differ from each other" in add["line"]

    scale = verdict(cap, "scale_kernel")
    assert scale["verdict"] == "not-replayable" and "randomness or a race" in scale["line"], scale
    shift = verdict(cap, "shift_kernel")
    assert shift["verdict"] == "not-replayable" and "not saved" in shift["line"], shift
    assert "agree with each other" in shift["line"]
    # Left out of the search: only add_kernel went on to the optimizer.
    assert "optimizing add_kernel" in proc.stderr
    assert "optimizing scale_kernel" not in proc.stderr and "optimizing shift_kernel" not in proc.stderr

    # The widened atol is now the task's: a second check finds the replays within it.
    plant(cap, "scale_kernel", "    raise RuntimeError('planted failure')")
    proc = tool("capture", "--from", "cap", "--optimize", "--budget", "5", cwd=where)
    assert verdict(cap, "add_kernel")["verdict"] == "within", verdict(cap, "add_kernel")
    failed = verdict(cap, "scale_kernel")
    assert failed["verdict"] == "not-replayable" and "planted failure" in failed["line"], failed


def test_not_replayable_kernels_are_not_served(captured):
    where, cap = captured
    plant(cap, "shift_kernel", "    for o in outs:\n        o += 0.5 * o.abs().max()")
    tool("capture", "--from", "cap", "--optimize", "--budget", "5", cwd=where)
    # An optimize result from before (written here by hand) is not served once the check says no.
    out = cap / "optimized" / "shift_kernel"
    out.mkdir(parents=True)
    tuned = out / "shift.py"
    tuned.write_text("")
    (out / "result.json").write_text(json.dumps({"status": "improved", "speedup": 2.0,
                                                 "outputs": {"source": str(tuned)}}))
    proc = tool("run", "--overlay", "cap", "--", sys.executable, "kernels_program.py", "2", cwd=where)
    assert proc.returncode == 0, proc.stderr
    assert "not serving shift_kernel: not replayable: the replays agree" in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--from", "nowhere", "--optimize"], "nowhere: no tasks/ folder"),
    (["--from", "cap"], "--from DIR goes with --optimize"),
    (["--from", "cap", "--optimize", "--", "python", "x.py"], "--from optimizes an earlier capture"),
])
def test_bad_from_is_one_line_and_exit_2(captured, args, message):
    where, _ = captured
    proc = tool("capture", *args, cwd=where)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_the_difference_of_one_output():
    import torch
    from tritonforge_worker.capture.replay_check import _difference
    same = _difference(torch.tensor([True, False]), torch.tensor([True, False]), 1e-4)
    assert same["exact"] and same["scale"] == 0.0  # no magnitude for booleans, and no error
    assert _difference(torch.tensor([1, 2], dtype=torch.int32), torch.tensor([1, 3], dtype=torch.int32),
                       1e-4)["int_mismatch"]
    nan = _difference(torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]), 1e-4)
    assert nan["exact"] and nan["scale"] == 1.0
    near = _difference(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.001]), 1e-4)
    assert not near["exact"] and near["needed_atol"] == pytest.approx(0.001 - 1e-4 * 2.001, rel=1e-3)
    assert _difference(torch.tensor([1.0, float("inf")]), torch.tensor([1.0, 2.0]), 1e-4)["nan_mismatch"]
    assert _difference(torch.tensor(3.0), torch.tensor(3.0), 1e-4)["exact"]


def _load_harness(folder):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"replay_harness_{folder.name}", folder / "harness.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_outputs_are_poisoned_where_the_kernel_as_written_overwrites_them(captured, monkeypatch):
    """A replay starts from the memory the launch saw; a variant that skips part of its output
    would find the recorded values there and pass. After the check, the search's replays start
    from NaN wherever the kernel as written writes regardless of what was there, and a variant
    that writes only half of its output is caught."""
    import torch
    from tritonforge_worker.runner import _compare
    where, cap = captured
    proc = tool("capture", "--from", "cap", "--optimize", "--budget", "5", cwd=where)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    add = verdict(cap, "add_kernel")
    assert add["poison"] == "outputs", add  # out = x + y: every element written, none read
    assert "outputs filled with NaN" in add["line"]
    scale = verdict(cap, "scale_kernel")
    assert scale["poison"] == "none", scale  # x *= s in place: it reads what it writes
    assert "reads what it writes" in scale["line"]
    plan = json.loads((cap / "tasks" / "add_kernel" / "replay.json").read_text())
    assert all(c["poison"] == "outputs" for c in plan["cases"])

    monkeypatch.setenv("TRITONFORGE_REPLAY_DEVICE", "cpu")
    folder = cap / "tasks" / "add_kernel"
    harness = _load_harness(folder)
    out_index = plan["in_place"][0]
    case = {"launch": 0}
    inputs = harness.make_inputs(case, 0)
    assert bool(torch.isnan(inputs[out_index]).all())
    expected = harness.expected(case, 0)
    x, y = inputs[0], inputs[1]
    # The right sums written over only the first half: the second half stays poisoned.
    half = inputs[out_index].numel() // 2
    inputs[out_index].view(-1)[:half] = (x + y).view(-1)[:half]
    passed, details = _compare([inputs[out_index]], expected, 1e-4, 1e-5)
    assert not passed and "never written" in details["reason"], details
    # Where the memory a launch starts from already holds the recording (in the program, a
    # buffer the caching allocator handed back), the same half-writer passes unpoisoned.
    plain = harness.make_inputs(case, 0, poisoned=False)
    plain[out_index].copy_(expected[0])
    plain[out_index].view(-1)[:half] = (plain[0] + plain[1]).view(-1)[:half]
    assert _compare([plain[out_index]], expected, 1e-4, 1e-5)[0]


def test_written_poisoning_covers_exactly_what_the_launch_changed(captured, monkeypatch):
    import torch
    where, cap = captured
    monkeypatch.setenv("TRITONFORGE_REPLAY_DEVICE", "cpu")
    folder = cap / "tasks" / "add_kernel"
    plan = json.loads((folder / "replay.json").read_text())
    harness = _load_harness(folder)
    out_index = plan["in_place"][0]
    case = {"launch": 0}
    before = harness.make_inputs(case, 0, poisoned=False)[out_index]
    after = harness.expected(case, 0)[0]
    # Unpoisoned, the output holds the bytes captured before the launch (whatever torch.empty_like
    # left there, NaN patterns included: bits are compared), even where the plan asks for poison.
    plan["cases"][0]["poison"] = "outputs"
    (folder / "replay.json").write_text(json.dumps(plan))
    saved = harness._arguments(harness._case_plan(0), "before")[out_index]
    unpoisoned = harness.make_inputs(case, 0, poisoned=False)[out_index]
    assert torch.equal(unpoisoned.view(torch.int32), saved.view(torch.int32))
    assert bool(torch.isnan(harness.make_inputs(case, 0)[out_index]).all())
    changed = harness._changed(before, after)
    written = harness.make_poisoned_inputs(case, "written")[out_index]
    assert torch.equal(torch.isnan(written), changed)
    assert torch.equal(written[~changed].view(torch.int32), before[~changed].view(torch.int32))
    everything = harness.make_poisoned_inputs(case, "outputs")[out_index]
    assert bool(torch.isnan(everything).all())
    # Bits, not values: -0.0 against 0.0 is a change, NaN against the same NaN is none.
    assert harness._changed(torch.tensor([0.0, float("nan")]), torch.tensor([-0.0, float("nan")])).tolist() == [True, False]


def test_each_output_is_checked_at_its_own_magnitude(captured):
    """One atol for every output fits the largest: with the task's atol at 1.0, add_kernel's
    outputs (magnitude about 2e3 at rtol 1e-4, so 0.2) get their own, tighter one, and the
    runner applies it per output."""
    import torch
    from tritonforge_worker.runner import _compare
    where, cap = captured
    task_toml = cap / "tasks" / "add_kernel" / "task.toml"
    task_toml.write_text(re.sub(r"^atol = .*$", "atol = 1.0", task_toml.read_text(), flags=re.M))
    proc = tool("capture", "--from", "cap", "--optimize", "--budget", "5", cwd=where)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    add = verdict(cap, "add_kernel")
    assert len(add["output_atol"]) == 1 and 0 < add["output_atol"][0] < 1.0, add
    line = re.search(r"^output_atol = \[(\S+)\]$", task_toml.read_text(), re.M)
    assert line and float(line.group(1)) == pytest.approx(add["output_atol"][0], rel=1e-5)
    assert atol_of(cap, "add_kernel") == 1.0  # the task's own atol stays as it was
    # A second check rewrites the line, never stacks it.
    tool("capture", "--from", "cap", "--optimize", "--budget", "5", cwd=where)
    assert task_toml.read_text().count("output_atol = ") == 1

    small = torch.tensor([1e-4, -2e-4])
    off = small + 5e-3  # wrong by 25x its magnitude: within an atol of 0.016
    assert _compare([off], [small], 1e-2, 1.6e-2)[0]
    passed, details = _compare([off, small * 1e4], [small, small * 1e4], 1e-2, 1.6e-2, [3.2e-6, 0.016])
    assert not passed and "output 0" in details["reason"] and details["tolerances"][0]["atol"] == 3.2e-6
    assert _compare([small, small * 1e4], [small, small * 1e4], 1e-2, 1.6e-2, [3.2e-6, 0.016])[0]

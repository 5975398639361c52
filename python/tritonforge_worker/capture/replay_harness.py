"""Harness of a task written by `tritonforge capture` from the launches a program made.

Copied beside the task as harness.py; replay.json beside it says, per case (one recorded
launch), which saved memory spans the launcher's tensors are views of, and the scalars. The
inputs are the memory as it was right before the launch; the expected outputs are the
in-place outputs as the launch left them (`expected`: the recorded result, not a computation).
Views into one span share one buffer again, as they did in the program.

Outputs poisoned: a variant that leaves part of an output unwritten must not pass because the
saved memory already held (close to) the right values there, nor be served to a program whose
fresh buffers hold anything at all. The replay check (capture/replay_check.py) finds, per case,
how much of the in-place outputs the kernel as written overwrites whatever they held: "outputs"
(every element of them), "written" (the elements the recorded launch changed), or "none" (it
reads what it writes). The core writes that as the case's "poison" in replay.json, and the inputs
of every later replay hold NaN (an odd sentinel for integers) there instead of the saved bytes.
"""

import json
import os

import numpy as np
import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
# Where the replay runs: the GPU; TRITONFORGE_REPLAY_DEVICE=cpu replays under TRITON_INTERPRET=1.
_DEVICE = os.environ.get("TRITONFORGE_REPLAY_DEVICE", "cuda")
_PLAN = os.path.join(_HERE, "replay.json")
with open(_PLAN, encoding="utf-8") as _f:
    _REPLAY = json.load(_f)
_PLAN_STAMP = os.stat(_PLAN).st_mtime_ns


def _case_plan(launch):
    """The plan of one case, re-read when replay.json changed (the replay check writes each
    case's poisoning into it while this module stays loaded in the worker)."""
    global _REPLAY, _PLAN_STAMP
    stamp = os.stat(_PLAN).st_mtime_ns
    if stamp != _PLAN_STAMP:
        with open(_PLAN, encoding="utf-8") as f:
            _REPLAY = json.load(f)
        _PLAN_STAMP = stamp
    return _REPLAY["cases"][launch]


def _span(digest):
    path = os.path.join(_REPLAY["data_dir"], digest + ".bin")
    return torch.from_numpy(np.fromfile(path, dtype=np.uint8)).to(_DEVICE)


def _arguments(case, state):
    spans = [_span(s[state] if state == "before" or s.get(state) else s["before"]) for s in case["spans"]]
    out = []
    for name in _REPLAY["inputs"]:
        t = case["tensors"].get(name)
        if t is None:
            out.append(case["scalars"][name])
            continue
        dtype = getattr(torch, t["dtype"])
        item = torch.empty((), dtype=dtype).element_size()
        base = spans[t["span"]]
        view = torch.empty(0, dtype=dtype, device=base.device)
        view.set_(base.untyped_storage(), t["byte_offset"] // item, t["shape"], t["stride"])
        out.append(view)
    return out


POISON_MODES = ("outputs", "written")


_SAME_WIDTH_INT = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


def _changed(before, after):
    """Elements whose bits differ between two views of one shape and dtype."""
    if before.dtype.is_complex:
        return _changed(torch.view_as_real(before), torch.view_as_real(after)).any(-1)
    width = before.element_size()
    if before.dtype == torch.bool or width not in _SAME_WIDTH_INT:
        return before != after
    as_int = getattr(torch, _SAME_WIDTH_INT[width])
    return before.view(as_int) != after.view(as_int)


def poison(inputs, recorded_case, mode):
    """Overwrites, in place, the in-place outputs of `inputs` (one case's arguments as saved
    before the launch) with the poison value: every element ("outputs") or those the recorded
    launch changed ("written"). Returns `inputs`."""
    if mode not in POISON_MODES:
        return inputs
    # The worker's poison (the values its guarded allocations hold); None for booleans, which
    # are left as saved. This harness only runs inside the worker.
    from tritonforge_worker.runner import _poison_value
    after = _arguments(recorded_case, "after") if mode == "written" else None
    for i in _REPLAY["in_place"]:
        t = inputs[i]
        value = _poison_value(t.dtype)
        if value is None:
            continue
        try:
            if mode == "outputs":
                t.fill_(value)
            else:
                t.masked_fill_(_changed(t, after[i]), value)
        except RuntimeError:  # a view whose elements share memory (a stride of 0): left as saved
            continue
    return inputs


def make_inputs(case, seed, poisoned=True):
    recorded = _case_plan(case["launch"])
    inputs = tuple(_arguments(recorded, "before"))
    return poison(inputs, recorded, recorded.get("poison", "none")) if poisoned else inputs


def make_poisoned_inputs(case, mode):
    """The case's inputs poisoned as `mode` says, whatever replay.json says (the replay check)."""
    recorded = _case_plan(case["launch"])
    return poison(tuple(_arguments(recorded, "before")), recorded, mode)


def expected(case, seed):
    after = _arguments(_REPLAY["cases"][case["launch"]], "after")
    return [after[i] for i in _REPLAY["in_place"]]


def reference(*inputs):
    raise RuntimeError("a replayed launch has no reference computation: its expected outputs are the recorded ones")


def bytes(case):
    spans = _REPLAY["cases"][case["launch"]]["spans"]
    return sum(s["nbytes"] for s in spans) + sum(s["nbytes"] for s in spans if s.get("after"))

"""Harness of a task written by `tritonforge capture` from the launches a program made.

Copied beside the task as harness.py; replay.json beside it says, per case (one recorded
launch), which saved memory spans the launcher's tensors are views of, and the scalars. The
inputs are the memory as it was right before the launch; the expected outputs are the
in-place outputs as the launch left them (`expected`: the recorded result, not a computation).
Views into one span share one buffer again, as they did in the program.
"""

import json
import os

import numpy as np
import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
# Where the replay runs: the GPU; TRITONFORGE_REPLAY_DEVICE=cpu replays under TRITON_INTERPRET=1.
_DEVICE = os.environ.get("TRITONFORGE_REPLAY_DEVICE", "cuda")
with open(os.path.join(_HERE, "replay.json"), encoding="utf-8") as _f:
    _REPLAY = json.load(_f)


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


def make_inputs(case, seed):
    return tuple(_arguments(_REPLAY["cases"][case["launch"]], "before"))


def expected(case, seed):
    after = _arguments(_REPLAY["cases"][case["launch"]], "after")
    return [after[i] for i in _REPLAY["in_place"]]


def reference(*inputs):
    raise RuntimeError("a replayed launch has no reference computation: its expected outputs are the recorded ones")


def bytes(case):
    spans = _REPLAY["cases"][case["launch"]]["spans"]
    return sum(s["nbytes"] for s in spans) + sum(s["nbytes"] for s in spans if s.get("after"))

"""The `replay_check` op: a captured kernel's task replayed as written, several times, before
the search tunes it.

Each case (one saved launch) runs `runs` times, each time on inputs read afresh from the saved
memory, and every run's outputs are compared with the outputs the program's launch left, and
with the first run's. What is measured, per case and run, is what the core's verdict needs
(src/capture/replay_check.h): whether the run reproduced the recording bit for bit, the largest
absolute difference, the smallest `atol` that the task's `rtol` would need to accept it, and
whether NaNs or integers differ (no tolerance accepts those). The verdict itself (reproduced,
varies within tolerance, widened, not replayable) is the core's.

Runs on the GPU; under TRITON_INTERPRET=1 with TRITONFORGE_REPLAY_DEVICE=cpu the same on the CPU.
"""

import os

from ..modules import resolve_attr


def _bits(t):
    import torch
    return t.contiguous().reshape(-1).view(torch.uint8)


def _difference(out, ref, rtol):
    """{exact, max_abs, needed_atol, nan_mismatch, int_mismatch, scale} of one output."""
    import torch
    if not isinstance(out, torch.Tensor) or not isinstance(ref, torch.Tensor) or tuple(out.shape) != tuple(ref.shape):
        raise TypeError("an output is not a tensor of the recorded shape")
    ref = ref.to(out.device)
    exact = out.dtype == ref.dtype and bool(torch.equal(_bits(out), _bits(ref)))
    d = {"exact": exact, "max_abs": 0.0, "needed_atol": 0.0, "nan_mismatch": False, "int_mismatch": False,
         "scale": 0.0}
    if exact:
        if ref.dtype.is_floating_point:
            finite = ref[torch.isfinite(ref)]
            d["scale"] = float(finite.abs().max()) if finite.numel() else 0.0
        return d
    if not (out.dtype.is_floating_point and ref.dtype.is_floating_point):
        d["int_mismatch"] = bool((out.to(torch.int64) != ref.to(torch.int64)).any())
        return d
    o = out.to(torch.float64)
    r = ref.to(torch.float64)
    nan_o, nan_r = torch.isnan(o), torch.isnan(r)
    d["nan_mismatch"] = bool((nan_o != nan_r).any())
    inf_r = torch.isinf(r)
    d["nan_mismatch"] = d["nan_mismatch"] or bool((torch.isinf(o) != inf_r).any()) or bool((o[inf_r] != r[inf_r]).any())
    finite = torch.isfinite(o) & torch.isfinite(r)
    if bool(finite.any()):
        diff = (o[finite] - r[finite]).abs()
        d["max_abs"] = float(diff.max())
        d["needed_atol"] = float((diff - rtol * r[finite].abs()).clamp_min(0).max())
        d["scale"] = float(r[finite].abs().max())
    return d


def _merge(parts):
    out = {"exact": all(p["exact"] for p in parts), "max_abs": 0.0, "needed_atol": 0.0,
           "nan_mismatch": any(p["nan_mismatch"] for p in parts),
           "int_mismatch": any(p["int_mismatch"] for p in parts), "scale": 0.0}
    for key in ("max_abs", "needed_atol", "scale"):
        out[key] = max([p[key] for p in parts] + [0.0])
    return out


def _sync():
    import torch
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _poison_mode(harness, launcher, case, in_place, recorded, rtol, runs):
    """How much of its in-place outputs the kernel as written overwrites, whatever they held:
    the first poisoning (replay_harness.POISON_MODES, strongest first) under which a replay gives
    the recorded outputs as closely as the plain replays did; "none" when the kernel reads what
    it writes (or the harness predates poisoning)."""
    import torch
    make = getattr(harness, "make_poisoned_inputs", None)
    if make is None:
        return "none"
    worst = _merge(runs)
    for mode in harness.POISON_MODES:
        work = make(case, mode)
        with torch.no_grad():
            launcher(*work)
        _sync()
        got = _merge([_difference(work[i], r, rtol) for i, r in zip(in_place, recorded)])
        if got["nan_mismatch"] or got["int_mismatch"]:
            continue
        # As close as the plain replays came: bit for bit where they were, else within twice their
        # largest difference (a kernel with atomics varies from replay to replay anyway).
        slack = 1.0 if worst["exact"] else 2.0
        if got["needed_atol"] <= slack * worst["needed_atol"] and got["max_abs"] <= slack * worst["max_abs"]:
            return mode
    return "none"


def op_replay_check(args):
    import torch
    from ..runner import _harness, _load_variant  # the runner's caches: the search reuses the loaded module

    on_cpu = os.environ.get("TRITONFORGE_REPLAY_DEVICE", "cuda") == "cpu"
    if not on_cpu and not torch.cuda.is_available():
        return {"status": "no_gpu", "message": "no CUDA GPU is visible to the worker"}
    search_path = args.get("search_path") or []
    harness = _harness(args["harness"], search_path)
    module = _load_variant(args["variant"], search_path)
    launcher = resolve_attr(module, args["launcher"])
    check = args.get("check") or {}
    rtol = float(check.get("rtol") or 0.0)
    in_place = list(check.get("in_place") or [])
    runs = max(2, int(args.get("runs", 2)))
    result = {"status": "ok", "runs": runs, "cases": []}
    for case in args["cases"]:
        entry = {"case": case, "runs": [], "runs_equal": True}
        try:
            recorded = harness.module.expected(dict(case), 0)
            first = None
            for _ in range(runs):
                work = harness.make_inputs(case, 0)  # read afresh: views share their buffers as in the program
                with torch.no_grad():
                    launcher(*work)
                _sync()
                outputs = [work[i] for i in in_place]
                if len(outputs) != len(recorded):
                    raise ValueError(f"{len(outputs)} in-place outputs, {len(recorded)} recorded")
                parts = [_difference(o, r, rtol) for o, r in zip(outputs, recorded)]
                run = _merge(parts)
                # Per output, for the core's per-output atol (replay_check.h).
                run["outputs"] = [{"scale": p["scale"], "needed_atol": p["needed_atol"]} for p in parts]
                entry["runs"].append(run)
                if first is None:
                    first = [o.clone() for o in outputs]
                else:
                    between = _merge([_difference(o, f, rtol) for o, f in zip(outputs, first)])
                    entry["runs_equal"] = entry["runs_equal"] and between["exact"] \
                        and not between["nan_mismatch"] and not between["int_mismatch"]
                    entry["between_max_abs"] = max(entry.get("between_max_abs", 0.0), between["max_abs"])
            entry["poison"] = _poison_mode(harness.module, launcher, case, in_place, recorded, rtol, entry["runs"])
        except Exception as exc:  # the verdict names it: the kernel is not replayable as captured
            entry["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        result["cases"].append(entry)
    return result

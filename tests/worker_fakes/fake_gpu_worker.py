"""A worker that pretends to have a GPU, for tests of the optimization loop without one.

hello, parse and compile are the real worker's (PYTHONPATH holds the package); `warm`,
`run` and `ceilings` answer at once with made-up but deterministic results:

  time_ms   = 1 + (FNV-1a of the variant's text) % 1000 / 1000, per case scaled by the case's
              "scale" (default 1); halved when the source contains "# fast", quartered for
              each "# stacked" line (passes that pay on top of each other)
  failures  = variants whose hash % 23 == 0 fail to compile (compile-error)
  outputs   = one float32 tensor of shape [N] (N from the case)

Environment:
  TF_FAKE_GPU_LOG   append one JSON line per `run` ({"variant", "case", "budget_ms", "pid"})
  TF_FAKE_RUN_S     seconds each `run` sleeps (default 0.02)
  TF_FAKE_WARM_S    seconds each `warm` sleeps (default 0.01)
  TF_FAKE_OPS_LOG   append one JSON line per warm / preload / run ({"op", "pid"})
  TF_FAKE_FIRST_RUN_S seconds the first `run` a process answers sleeps more (the first call of
                    the kernel as written, on the measurement worker, compiles it)
  TF_FAKE_SLOW_WARM a regular expression: variants whose text matches it compile slowly,
                    TF_FAKE_SLOW_WARM_S more seconds (default 1)
  TF_FAKE_SPILLS    a regular expression: variants whose text matches it report 64 spills
  TF_FAKE_ROUTE     a regular expression: variants whose text matches it launch a Gluon kernel
                    ("fake_route") instead of their own (a lowering's route taken on every case)
  TF_FAKE_WRONG_SHAPE a regular expression: variants whose text matches it return an output
                    of another shape (as a launcher whose block size sets its output's size)
  A per-shape dispatch's source is timed as the part its routes pick for the case's N (the
  kernel as written, or a variant's section with its names' suffixes taken off).
  TF_FAKE_FLAT      1: every variant takes 1 ms (times the case's scale), whatever its hash
  TF_FAKE_FAST_FACTOR what a "# fast" line multiplies the time by (default 0.5)
  TF_FAKE_FAST_TEXT a regular expression: a variant whose text matches it is twice as fast
  TF_FAKE_SLOW_CASE KEY=VALUE: on cases whose KEY is VALUE, a "# fast" variant is 1.5x
                    slower than as written instead of 2x faster (a per-case regression)
  TF_FAKE_SLOW_CASE_FIX a regular expression: a "# fast" variant whose text matches it is fast
                    on the slow case too (a configuration that suits the pass's output)
  TF_FAKE_RELAID_FIX a regular expression: a variant with a "# relaid" line is 1.2x slower
                    unless its text matches it, then twice as fast (a layout whose own
                    parameters differ)
  TF_FAKE_SLOWER    KEY=VALUE*FACTOR: on cases whose KEY is VALUE, every variant takes FACTOR
                    times as long (a planted slowdown, for `check`)
  TF_FAKE_NOISY     KEY=VALUE*SPREAD: on cases whose KEY is VALUE, every timing's quartiles are
                    SPREAD of the median apart (a measurement something else on the GPU disturbed)
  TF_FAKE_WRONG     a regular expression: variants whose text matches it fail verification
                    (wrong-result at seed 0)
  TF_FAKE_WRONG_AT  KEY=VALUE: on cases whose KEY is VALUE, a "# fast" variant fails
                    verification (wrong on a shape no task case has)
  TF_FAKE_SETUP_S   the seconds a process's first run of a case reports as spent making its
                    inputs and references (setup_seconds; not slept)
  TF_FAKE_GLUE      SHARE[:SYNCS]: a run asked for the launcher's timeline reports SHARE of its GPU
                    time in a torch kernel outside the Triton ones, and SYNCS host syncs
  TF_FAKE_TRITON    the Triton version `hello` reports (a changed toolchain)
  TF_FAKE_COMPILE_ERROR a regular expression: variants whose text matches it fail to compile
                    ("fake: name 'undefined_thing' is not defined", as a rewrite with a typo)
  TF_FAKE_INPUTS    the number of inputs make_inputs "returns": `run` checks check.in_place
                    against it as the real worker does (a TaskError reply)
  TF_FAKE_GPUS      how many GPUs the machine has (default 1); a worker pinned with
                    CUDA_VISIBLE_DEVICES=I sees GPU I only (none when I is not one of them)
  TF_FAKE_GPU_MODELS comma-separated model names of GPU 0, 1, ... (default "Fake GPU" for each)
  TF_FAKE_LANE_SLOW I*FACTOR: on GPU I (its CUDA_VISIBLE_DEVICES value) every variant takes
                    FACTOR times as long (a slower GPU of the same model)
  TF_FAKE_DIE       I:N: the worker of GPU I exits abruptly (os._exit) on its N-th `run`,
                    before answering (a lost worker; under Ray, a dead actor)
The run log's lines carry "tags": which of "slow" and "spills" the variant has, and "device":
the worker's CUDA_VISIBLE_DEVICES.
"""

import json
import os
import re
import sys
import time

from tritonforge_worker import PROTOCOL_VERSION
from tritonforge_worker.ops import dispatch as real_dispatch
from tritonforge_worker.runner import check_in_place


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def variant_text(args):
    with open(args["variant"]["path"], "rb") as f:
        return f.read()


def tags_of(text):
    tags = []
    for tag, var in (("slow", "TF_FAKE_SLOW_WARM"), ("spills", "TF_FAKE_SPILLS"), ("route", "TF_FAKE_ROUTE")):
        pattern = os.environ.get(var)
        if pattern and re.search(pattern, text.decode("utf-8", "replace")):
            tags.append(tag)
    return tags


def fake_kernels(tags):
    if "route" in tags:
        return [{"name": "fake_route", "dialect": "gluon", "num_warps": 4, "num_stages": 1, "shared_bytes": 0,
                 "registers": 32, "spills": 0}]
    return [{"name": "fake_kernel", "num_warps": 4, "num_stages": 3, "shared_bytes": 0,
             "registers": 255 if "spills" in tags else 32, "spills": 64 if "spills" in tags else 0}]


def _slow_case(case, var="TF_FAKE_SLOW_CASE"):
    spec = os.environ.get(var)
    if not spec or "=" not in spec:
        return False
    key, value = spec.split("=", 1)
    return str(case.get(key)) == value


def _case_factor(var, case, otherwise):
    """KEY=VALUE*X in the environment variable `var`: X on cases whose KEY is VALUE."""
    spec = os.environ.get(var)
    if not spec or "=" not in spec or "*" not in spec:
        return otherwise
    cond, x = spec.rsplit("*", 1)
    key, value = cond.split("=", 1)
    return float(x) if str(case.get(key)) == value else otherwise


def _slower(case):
    return _case_factor("TF_FAKE_SLOWER", case, 1.0)


def _spread(case):
    return _case_factor("TF_FAKE_NOISY", case, 0.002)


def op_warm(args):
    time.sleep(float(os.environ.get("TF_FAKE_WARM_S", "0.01")))
    text = variant_text(args)
    tags = tags_of(text)
    if "slow" in tags:
        time.sleep(float(os.environ.get("TF_FAKE_SLOW_WARM_S", "1")))
    if fnv1a64(text) % 23 == 0:
        return {"status": "compile-error", "message": "fake: this variant does not compile"}
    broken = os.environ.get("TF_FAKE_COMPILE_ERROR")
    if broken and re.search(broken, text.decode("utf-8", "replace")):
        return {"status": "compile-error", "message": "fake: name 'undefined_thing' is not defined"}
    return {"status": "ok", "kernels": fake_kernels(tags), "seconds": 0.01}


_FIRST_RUN_DONE = False


def _models():
    n = int(os.environ.get("TF_FAKE_GPUS", "1"))
    names = [m.strip() for m in os.environ.get("TF_FAKE_GPU_MODELS", "").split(",") if m.strip()]
    return [names[i] if i < len(names) else "Fake GPU" for i in range(n)]


def _lane_factor():
    spec = os.environ.get("TF_FAKE_LANE_SLOW")
    if not spec or "*" not in spec:
        return 1.0
    device, factor = spec.split("*", 1)
    return float(factor) if os.environ.get("CUDA_VISIBLE_DEVICES") == device else 1.0


_RUNS = 0


def _maybe_die():
    global _RUNS
    _RUNS += 1
    spec = os.environ.get("TF_FAKE_DIE")
    if not spec or ":" not in spec:
        return
    device, nth = spec.split(":", 1)
    if os.environ.get("CUDA_VISIBLE_DEVICES") == device and _RUNS == int(nth):
        os._exit(17)


_DISPATCH_HEAD = b"# tritonforge: a per-shape dispatch."
_ROUTE = re.compile(rb"^    \((\d+), (\d+), \w+_tfv(\d+)\),", re.M)
_SECTION = re.compile(rb"^# -{20} variant (\d+): .*$", re.M)


def routed_text(text, n):
    """The text of what a per-shape dispatch runs for N = n (x.shape[0]): the variant section
    its routes pick, with the suffixes taken off (the candidate's own text), or the kernel as
    written above the dispatch's head."""
    head = text.find(_DISPATCH_HEAD)
    if head < 0:
        return text
    original = text[:text.rfind(b"\n\n\n# ", 0, head) + 1]
    sections = {}
    marks = _SECTION.finditer(text)
    for m in marks:
        end = text.find(b"\n\n\n# -", m.end())
        sections[int(m.group(1))] = re.sub(rb"_tfv\d+", b"", text[m.end() + 1:end + 1])
    for m in _ROUTE.finditer(text):
        if int(m.group(1)) <= n <= int(m.group(2)):
            return sections[int(m.group(3))]
    return original


_CASES_SET_UP = set()


def _setup_seconds(case):
    """TF_FAKE_SETUP_S on the first run of a case in this process (its inputs and references
    made), 0 after: reported, not slept."""
    key = json.dumps(case, sort_keys=True)
    if key in _CASES_SET_UP:
        return 0.0
    _CASES_SET_UP.add(key)
    return float(os.environ.get("TF_FAKE_SETUP_S", "0"))


def op_run(args):
    _maybe_die()
    if os.environ.get("TF_FAKE_INPUTS"):
        check_in_place((args.get("check") or {}).get("in_place") or [], int(os.environ["TF_FAKE_INPUTS"]))
    time.sleep(float(os.environ.get("TF_FAKE_RUN_S", "0.02")))
    global _FIRST_RUN_DONE
    if not _FIRST_RUN_DONE:
        _FIRST_RUN_DONE = True
        time.sleep(float(os.environ.get("TF_FAKE_FIRST_RUN_S", "0")))
    case = args.get("case") or {}
    text = routed_text(variant_text(args), int(case.get("N", 1024)))
    h = fnv1a64(text)
    tags = tags_of(text)
    budget = (args.get("timing") or {}).get("budget_ms", 0)
    log = os.environ.get("TF_FAKE_GPU_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"variant": f"{h:016x}", "case": json.dumps(case, sort_keys=True, separators=(",", ":")),
                                "budget_ms": budget, "pid": os.getpid(), "tags": tags,
                                "device": os.environ.get("CUDA_VISIBLE_DEVICES")}) + "\n")
    if h % 23 == 0:
        return {"status": "compile-error", "message": "fake: this variant does not compile"}
    t = 1.0 if os.environ.get("TF_FAKE_FLAT") == "1" else 1.0 + (h % 1000) / 1000.0
    t *= float(case.get("scale", 1))
    if b"# fast" in text:
        fix = os.environ.get("TF_FAKE_SLOW_CASE_FIX")
        fixed = bool(fix) and re.search(fix, text.decode("utf-8", "replace")) is not None
        t *= 1.5 if _slow_case(case) and not fixed else float(os.environ.get("TF_FAKE_FAST_FACTOR", "0.5"))
    t *= 0.25 ** text.count(b"# stacked")
    fast_text = os.environ.get("TF_FAKE_FAST_TEXT")
    if fast_text and re.search(fast_text, text.decode("utf-8", "replace")):
        t *= 0.5
    if b"# relaid" in text:
        fix = os.environ.get("TF_FAKE_RELAID_FIX")
        t *= 0.5 if fix and re.search(fix, text.decode("utf-8", "replace")) else 1.2
    t *= _slower(case)
    t *= _lane_factor()
    if b"# combo" in text and b"# enabler" in text:  # two passes that pay only together
        t *= 0.25
    n = int(case.get("N", 1024))
    wrong_value = os.environ.get("TF_FAKE_WRONG")
    if (wrong_value and re.search(wrong_value, text.decode("utf-8", "replace"))) or \
            (b"# fast" in text and _slow_case(case, "TF_FAKE_WRONG_AT")):
        return {"status": "wrong-result",
                "verify": {"passed": False, "failed_seed": 0, "max_abs_err": 1.0, "max_rel_err": 1.0,
                           "reason": "fake: output 0 differs from the reference at index 3"},
                "kernels": fake_kernels(tags), "outputs": [{"dtype": "float32", "shape": [n]}]}
    wrong = os.environ.get("TF_FAKE_WRONG_SHAPE")
    if wrong and re.search(wrong, text.decode("utf-8", "replace")):
        n += 1
    out = {"status": "ok",
            "setup_seconds": _setup_seconds(case),
            "arguments": [{"name": "x", "shape": [n], "dtype": "float32"},
                          {"name": "y", "shape": [n], "dtype": "float32"}],
            "verify": {"passed": True, "max_abs_err": 0.0, "max_rel_err": 0.0},
            "timing": {"median_ms": t, "q1_ms": t * (1 - _spread(case) / 2), "q3_ms": t * (1 + _spread(case) / 2),
                       "min_ms": t * 0.998,
                       "max_ms": t * 1.01, "mean_ms": t, "reps": 10, "method": "fake"},
            "kernels": fake_kernels(tags),
            "outputs": [{"dtype": "float32", "shape": [n]}]}
    if args.get("timeline"):
        out["timeline"] = _timeline(t)
    return out


def _timeline(t):
    """TF_FAKE_GLUE's split of a call of `t` ms (all Triton without it)."""
    share, _, syncs = os.environ.get("TF_FAKE_GLUE", "0").partition(":")
    other = t * float(share)
    outside = [{"name": "void at::native::reduce_kernel<512, 1>", "kind": "other", "ms": other, "count": 1}] if other else []
    return {"wall_ms": t * 1.2, "gpu_ms": t, "triton_ms": t - other, "triton_launches": 1, "other_ms": other,
            "copy_ms": 0.0, "outside": outside, "host_syncs": int(syncs or 0)}


def _log_op(op, args):
    """TF_FAKE_OPS_LOG: one line per warm, preload and run as it starts, and per warm as it
    ends (`warm-done`), with its pid, cases and autotune share."""
    ops_log = os.environ.get("TF_FAKE_OPS_LOG")
    if ops_log:
        with open(ops_log, "a") as f:
            f.write(json.dumps({"op": op, "pid": os.getpid(), "cases": args.get("cases"),
                                "autotune_part": args.get("autotune_part")}) + "\n")


def dispatch(op, args):
    if op in ("warm", "preload", "run"):
        _log_op(op, args)
    if op == "hello":
        info = real_dispatch("hello", dict(args, probe_torch=False))
        models = _models()
        pinned = os.environ.get("CUDA_VISIBLE_DEVICES")
        if pinned is not None:
            models = [models[int(pinned)]] if pinned.isdigit() and int(pinned) < len(models) else []
        if not models:
            info["gpu"] = None
            info["gpu_reason"] = "no CUDA GPU is visible"
            info["torch"] = "fake"
            return info
        info["gpu"] = {"name": models[0], "cc": [9, 0], "sms": 132, "memory_bytes": 1 << 34,
                       "l2_bytes": 1 << 25, "device_count": len(models), "driver": "fake-1.0",
                       "devices": [{"index": i, "name": m} for i, m in enumerate(models)],
                       "visible_devices": pinned}
        info["gpu_reason"] = None
        info["torch"] = "fake"
        info["triton"] = os.environ.get("TF_FAKE_TRITON") or info.get("triton") or "fake"
        return info
    if op == "warm":
        reply = op_warm(args)
        _log_op("warm-done", args)
        return reply
    if op == "preload":
        time.sleep(float(os.environ.get("TF_FAKE_PRELOAD_S", "0")))
        return {"status": "ok"}
    if op == "run":
        return op_run(args)
    if op == "ceilings":  # a fake GPU's ceilings, at once (the real op needs torch and a GPU)
        return {"dram_bytes_per_s": 4.0e12, "flops_per_s": {"fp16": 6.0e14, "bf16": 6.0e14, "tf32": 3.0e14,
                                                           "fp32": 5.0e13}}
    return real_dispatch(op, args)


def main():
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        req = json.loads(line)
        if req.get("op") == "shutdown":
            break
        try:
            reply = {"v": PROTOCOL_VERSION, "id": req.get("id"), "ok": True,
                     "result": dispatch(req.get("op"), req.get("args") or {})}
        except Exception as exc:  # a failure is a reply, as in the real worker
            reply = {"v": PROTOCOL_VERSION, "id": req.get("id"), "ok": False,
                     "error": {"type": type(exc).__name__, "message": str(exc)}}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()

"""The suite's measurement process: one per run (restarted after a fatal CUDA error), driven
by bench/run over JSON lines on stdin/stdout (anything a kernel prints goes to stderr).

Ops
  hello      GPU, driver, CUDA, cuDNN, torch, triton, python
  ceilings   measured DRAM bandwidth (device copy, bytes read + written) and cuBLAS's dense
             matmul rate for fp16, bf16 and tf32 (8192^3): the roofline of the table
  measure_real  one kernel of the real corpus (bench/real/): as written, tritonforge's result, vendor
  measure    one kernel: for each case, the @triton.autotune variant (first, on a cold Triton
             cache, so that its tuning time includes compiling), the kernel as written,
             tritonforge's result, and the vendor op (every implementation the harness's
             vendors() lists, e.g. SDPA's backends: the fastest verified one is "vendor", all are
             kept under "vendors"); each verified against the reference and timed the same way

Timing: CUDA events around each call with a 256 MiB write before it (L2 flushed), as many
repetitions as `budget_ms` allows (at least 10); the median is reported. With the
interpreter (TRITON_INTERPRET=1, CPU tensors) wall-clock time of a few calls stands in.
"""

import gc
import json
import os
import platform
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchlib import configs as standard_configs  # noqa: E402
from benchlib import suite, verify  # noqa: E402

INTERPRET = os.environ.get("TRITON_INTERPRET", "") == "1"
if INTERPRET:
    from benchlib import interpreter_fixes
    interpreter_fixes.apply()


class Fatal(Exception):
    """The CUDA context is unusable: reply, then exit."""


# ---------------------------------------------------------------------------------------
# Timing


def _quantiles(values):
    v = sorted(values)
    n = len(v)

    def q(p):
        pos = p * (n - 1)
        lo = int(pos)
        hi = min(lo + 1, n - 1)
        return v[lo] + (v[hi] - v[lo]) * (pos - lo)

    return q(0.25), q(0.5), q(0.75)


def time_fn(fn, budget_ms=200.0, min_reps=10, max_reps=1000):
    if INTERPRET:
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        q1, med, q3 = _quantiles(times)
        return {"median_ms": med, "q1_ms": q1, "q3_ms": q3, "reps": len(times), "method": "cpu-interpreter"}
    # Timed exactly as tritonforge times (the worker's runner): the L2 flushed before each
    # call, each call queued behind a GPU sleep longer than the host needs to queue it.
    _worker_on_path()
    from tritonforge_worker import runner
    times = runner._time_events(fn, budget_ms, min_reps, max_reps, True)
    q1, med, q3 = _quantiles(times)
    return {"median_ms": med, "q1_ms": q1, "q3_ms": q3, "reps": len(times), "method": "cuda-events+l2flush+ahead"}


def _sync():
    if not INTERPRET:
        import torch
        torch.cuda.synchronize()


# ---------------------------------------------------------------------------------------
# Ops


def op_hello(_args):
    import torch
    import triton
    info = {"python": platform.python_version(), "torch": torch.__version__, "triton": triton.__version__,
            "hostname": platform.node(), "interpret": INTERPRET, "cuda_runtime": torch.version.cuda}
    if INTERPRET or not torch.cuda.is_available():
        info["gpu"] = None
        return info
    props = torch.cuda.get_device_properties(0)
    info["gpu"] = {"name": props.name, "capability": f"{props.major}.{props.minor}",
                   "sms": props.multi_processor_count, "memory_bytes": props.total_memory,
                   "device_count": torch.cuda.device_count(),  # bench/run --gpus
                   "devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]}
    try:
        info["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        info["cudnn"] = None
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,clocks.max.mem,power.limit",
                            "--format=csv,noheader", "-i", "0"], capture_output=True, text=True, timeout=30)
        parts = [p.strip() for p in r.stdout.strip().splitlines()[0].split(",")]
        info["driver"] = parts[0]
        info["clocks_max_sm"], info["clocks_max_mem"], info["power_limit"] = parts[1:4]
    except Exception as exc:
        info["driver"] = f"unknown ({type(exc).__name__})"
    return info


def op_ceilings(args):
    import torch
    if INTERPRET:
        return {"dram_bytes_per_s": None, "matmul_flops_per_s": {}, "note": "interpreter: nothing measured"}
    out = {"matmul_flops_per_s": {}}
    n = int(args.get("copy_bytes", 2 * 2**30))
    a = torch.empty(n // 4, dtype=torch.float32, device="cuda").normal_()
    b = torch.empty_like(a)
    t = time_fn(lambda: b.copy_(a), 300, 10, 200)
    out["dram_bytes_per_s"] = 2 * n / (t["median_ms"] * 1e-3)
    out["copy_bytes"] = n
    del a, b
    size = int(args.get("matmul_size", 8192))
    old = torch.backends.cuda.matmul.allow_tf32
    try:
        for name, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16), ("tf32", torch.float32)):
            torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
            x = torch.randn(size, size, device="cuda", dtype=dtype)
            y = torch.randn(size, size, device="cuda", dtype=dtype)
            t = time_fn(lambda: torch.matmul(x, y), 400, 5, 100)
            out["matmul_flops_per_s"][name] = 2 * size**3 / (t["median_ms"] * 1e-3)
            del x, y
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    # Quantized GEMMs (the suite's and the real corpus's): cuBLAS's int8 and fp8 rates, measured
    # as tritonforge's worker measures them (runner.low_precision_rates).
    wanted = set(args.get("extra_matmul", []))
    if wanted:
        _worker_on_path()
        from tritonforge_worker import runner
        notes = []
        rates = runner.low_precision_rates(torch, size, notes)
        out["matmul_flops_per_s"].update({k: v for k, v in rates.items() if k in wanted})
        for note in notes:  # "fp8 rate not measured: ..."
            name = note.split(" ", 1)[0]
            if name in wanted:
                out.setdefault("errors", {})[name] = note
    out["matmul_size"] = size
    torch.cuda.empty_cache()
    return out


def _is_fatal(exc):
    text = f"{type(exc).__name__}: {exc}".lower()
    return any(s in text for s in ("illegal memory access", "illegal address", "unspecified launch failure",
                                   "misaligned address", "device-side assert", "cuda error: an illegal"))


def _config_text(cfg):
    if cfg is None:
        return None
    parts = [f"{k}={v}" for k, v in cfg.kwargs.items()]
    parts.append(f"num_warps={cfg.num_warps}")
    parts.append(f"num_stages={cfg.num_stages}")
    return " ".join(parts)


def _timed_variant(label, build, first_call_timed, rtol, atol, timing):
    """build() -> (first, again): first() runs the variant once and returns (outputs, refs) to
    verify; again() is the call that is timed. Never raises except Fatal."""
    import torch
    rec = {"status": "ok"}
    try:
        t0 = time.perf_counter()
        first, again = build()
        t1 = time.perf_counter()
        with torch.no_grad():
            out, refs = first()
        _sync()
        t2 = time.perf_counter()
        if first_call_timed:
            rec["first_call_s"] = t2 - t1
        rec["build_s"] = t1 - t0
        rec["verify"] = verify.compare(out, refs, rtol, atol)
        del out
        with torch.no_grad():
            rec["timing"] = time_fn(again, **timing)
        rec["ms"] = rec["timing"]["median_ms"]
    except Exception as exc:
        if _is_fatal(exc):
            raise Fatal(f"{label}: {type(exc).__name__}: {exc}") from exc
        rec = {"status": "error", "message": f"{type(exc).__name__}: {str(exc).strip()[:600]}",
               "traceback": traceback.format_exc()[-3000:]}
    return rec


def _variant(label, make, first_call_timed, inputs, refs, rtol, atol, timing):
    """Builds, runs once (verifies), times. Never raises except Fatal."""
    def build():
        fn = make()
        work = verify.clone(inputs)
        return (lambda: (fn(*work), refs)), (lambda: fn(*work))
    return _timed_variant(label, build, first_call_timed, rtol, atol, timing)


def listed_vendors(harness):
    """({name: callable}, error): the implementations the harness's vendors() lists, in order
    ({} when it lists none or has no vendors(); then harness.vendor stands alone), and the
    error line when vendors() itself failed."""
    listed = getattr(harness, "vendors", None)
    if listed is None:
        return {}, None
    try:
        return dict(listed()), None
    except Exception as exc:
        return {}, f"vendors(): {type(exc).__name__}: {str(exc).strip()[:300]}"


def measure_vendors(harness, measure):
    """The vendor's records of one case: {"vendor": rec}, rec = measure(label, make) of
    harness.vendor; or, where the harness has vendors() ({name: callable} in order, each taking
    vendor's inputs: the implementations usable here, e.g. SDPA's backends), each one measured
    alike and kept under "vendors" ({name: rec}), and "vendor" the fastest verified one's record
    with its "name" (the first's where none verified). measure never raises (but Fatal): a
    backend that fails is recorded as such and the others go on."""
    impls, error = listed_vendors(harness)
    if not impls:
        rec = measure("vendor", lambda: harness.vendor)
        if error:
            rec["vendors_error"] = error
        return {"vendor": rec}
    recs = {name: measure(f"vendor {name}", lambda fn=fn: fn) for name, fn in impls.items()}
    return {"vendor": fastest_vendor(recs), "vendors": recs}


def fastest_vendor(recs):
    """The record of the fastest verified implementation in {name: rec}, with "name" added;
    the first's where none verified."""
    verified = [(rec["ms"], i, name) for i, (name, rec) in enumerate(recs.items())
                if rec.get("status") == "ok" and (rec.get("verify") or {}).get("passed") and rec.get("ms") is not None]
    name = min(verified)[2] if verified else next(iter(recs))
    return dict(recs[name], name=name)


def _worker_on_path():
    """Puts the repository's python/ (tritonforge_worker) on sys.path."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "python")
    if path not in sys.path:
        sys.path.insert(0, path)


def _backward_rules():
    """The worker's rules for backward tasks (python/tritonforge_worker/backward.py): the bench
    checks and times a backward exactly as tritonforge does."""
    _worker_on_path()
    from tritonforge_worker import backward
    return backward


def _variant_backward(label, make, first_call_timed, inputs, harness, case, refs_of, rtol, atol, timing):
    """_variant for a backward task: the forward runs once, its gradients are checked against
    the reference's (refs_of(indices, output gradients)) and the gradient computation alone is
    timed, repeated on the one forward graph (autograd is switched on where it is needed, by
    the rules themselves). Never raises except Fatal."""
    bw = _backward_rules()
    state = {}

    def build():
        fn = make()
        idx = bw.grad_indices(harness, case, inputs)

        def first():
            leaves, outs = bw.forward(fn, verify.clone(inputs), idx)
            grads = bw.grad_outputs(harness, case, 0, outs)
            refs = refs_of(idx, [g.clone() for g in grads])   # before a backward that works in place
            state.update(leaves=leaves, outs=outs, grads=grads)
            return bw.gradients(outs, leaves, idx, grads, retain_graph=True), refs

        def again():
            bw.gradients(state["outs"], state["leaves"], idx, state["grads"], retain_graph=True)
        return first, again
    return _timed_variant(label, build, first_call_timed, rtol, atol, timing)


def op_measure(args):
    import torch
    import triton
    spec = args["spec"]
    cache_dir = args.get("triton_cache_dir")
    if cache_dir:
        os.makedirs(cache_dir, exist_ok=True)
        os.environ["TRITON_CACHE_DIR"] = cache_dir
        try:
            triton.knobs.cache.dir = cache_dir
        except Exception:
            pass
    timing = {"budget_ms": float(args.get("timing_budget_ms", 200))}
    harness = suite.load_module(spec["harness"], "harness")
    if INTERPRET:
        harness.DEVICE = "cpu"
    cases = [harness.SMALL_CASE] if args.get("small") else spec["cases"]
    result = {"cases": [], "vendor_name": getattr(harness, "VENDOR", "torch"), "peak": getattr(harness, "PEAK", None)}
    for case in cases:
        entry = {"case": case}
        entry["flops"] = harness.flops(case) if hasattr(harness, "flops") else None
        entry["bytes"] = harness.bytes(case) if hasattr(harness, "bytes") else None
        inputs = harness.make_inputs(dict(case), 0)
        if not isinstance(inputs, (tuple, list)):
            inputs = (inputs,)
        refs = verify.reference_outputs(harness, inputs, spec["reference_precision"])
        _sync()
        rtol, atol = spec["rtol"], spec["atol"]

        # 1. @triton.autotune over the standard list, on a cold cache: tuning time = first call.
        tuners = []

        def autotune(configs, key):
            extra = {}
            if INTERPRET:
                extra["do_bench"] = lambda fn, quantiles: [_cpu_call_ms(fn)] * 3

            def deco(fn):
                tuner = triton.autotune(configs=configs, key=key, **extra)(fn)
                tuners.append((tuner, len(configs)))
                return tuner
            return deco

        def make_autotuned():
            mod = suite.load_module(spec["source"], "autotune_kernel")
            at = suite.load_module(spec["autotune"], "autotune")
            return at.make_launcher(mod, autotune, standard_configs)

        rec = _variant("autotune", make_autotuned, True, inputs, refs, rtol, atol, timing)
        if tuners:
            tuner, n = tuners[0]
            rec["configs"] = n
            rec["best_config"] = _config_text(getattr(tuner, "best_config", None))
            rec["bench_time_s"] = getattr(tuner, "bench_time", None)
            timings = getattr(tuner, "configs_timings", None) or {}
            rec["failed_configs"] = sum(1 for v in timings.values()
                                        if (v[0] if isinstance(v, (list, tuple)) else v) == float("inf"))
        if "first_call_s" in rec:
            rec["tuning_s"] = rec["build_s"] + rec["first_call_s"]
        entry["autotune"] = rec

        # 2. The kernel as written.
        def make_baseline():
            return getattr(suite.load_module(spec["source"], "baseline"), spec["launcher"])
        entry["baseline"] = _variant("baseline", make_baseline, True, inputs, refs, rtol, atol, timing)

        # 3. tritonforge's result (its optimized source), when it changed anything.
        tf_source = args.get("tritonforge_source")
        if tf_source:
            def make_tf():
                return getattr(suite.load_module(tf_source, "tritonforge"), spec["launcher"])
            entry["tritonforge"] = _variant("tritonforge", make_tf, True, inputs, refs, rtol, atol, timing)

        # 4. The vendor op through torch (each of its backends, where the harness lists them).
        def measure_vendor(label, make, inputs=inputs, refs=refs):
            return _variant(label, make, True, inputs, refs, rtol, atol, timing)
        entry.update(measure_vendors(harness, measure_vendor))

        result["cases"].append(entry)
        del inputs, refs
        gc.collect()
        if not INTERPRET:
            torch.cuda.empty_cache()
    return result


def _resolve(module, launcher):
    """The launcher as real code calls it: a function, or Class.method (e.g. Function.apply)."""
    obj = module
    for part in launcher.split("."):
        obj = getattr(obj, part)
    return obj


def _with_in_place(fn, in_place):
    """A launcher that writes its outputs into inputs and returns None returns those inputs."""
    if not in_place:
        return fn

    def call(*args):
        out = fn(*args)
        return [args[i] for i in in_place] if out is None else out
    return call


def _add_paths(spec):
    for p in reversed(spec.get("pythonpath") or []):
        if p not in sys.path:
            sys.path.insert(0, p)


def _import_source(spec, tag):
    """The kernel as written, loaded as real code loads it: by its import name from the laid-out
    package roots where it is part of a package (its relative imports then resolve), else by
    path (a fresh module each time, as the suite does)."""
    import importlib
    _add_paths(spec)
    if spec.get("module"):
        return importlib.import_module(spec["module"])
    return suite.load_module(spec["source"], tag)


def op_measure_real(args):
    """One real-corpus kernel: for each case, the kernel as written (imported as its project
    imports it), tritonforge's optimized source (loaded by path, as tritonforge ran it), and the
    harness's vendor op where it names one; each verified against the float64 reference and
    timed the same way. A backward task (direction = "backward"): their gradients instead (the
    vendor's through autograd), checked and timed as tritonforge's worker does."""
    import torch
    spec = args["spec"]
    cache_dir = args.get("triton_cache_dir")
    if cache_dir:
        os.makedirs(cache_dir, exist_ok=True)
        os.environ["TRITON_CACHE_DIR"] = cache_dir
    timing = {"budget_ms": float(args.get("timing_budget_ms", 200))}
    harness = suite.load_module(spec["harness"], "harness")
    if INTERPRET:
        harness.DEVICE = "cpu"
    cases = [harness.SMALL_CASE] if args.get("small") else spec["cases"]
    in_place = spec.get("in_place") or []
    backward = spec.get("direction") == "backward"
    result = {"cases": [], "vendor_name": getattr(harness, "VENDOR", None) if hasattr(harness, "vendor") else None,
              "peak": getattr(harness, "PEAK", None)}
    for case in cases:
        entry = {"case": case}
        entry["flops"] = harness.flops(case) if hasattr(harness, "flops") else None
        entry["bytes"] = harness.bytes(case) if hasattr(harness, "bytes") else None
        inputs = harness.make_inputs(dict(case), 0)
        if not isinstance(inputs, (tuple, list)):
            inputs = (inputs,)
        rtol, atol = spec["rtol"], spec["atol"]
        if backward:
            # The reference gradients once per case: every variant draws the same output
            # gradients (seed 0), as tritonforge's worker does.
            grad_refs = {}

            def refs_of(idx, grads, inputs=inputs, grad_refs=grad_refs):
                if "refs" not in grad_refs:
                    grad_refs["refs"] = _backward_rules().reference_gradients(
                        harness, inputs, idx, grads, spec["reference_precision"] == "float64")
                return grad_refs["refs"]

            def measure(label, make, inputs=inputs, case=case, refs_of=refs_of):
                return _variant_backward(label, make, True, inputs, harness, case, refs_of, rtol, atol, timing)
            refs = None
        else:
            refs = verify.reference_outputs(harness, inputs, spec["reference_precision"])

            def measure(label, make, inputs=inputs, refs=refs):
                return _variant(label, make, True, inputs, refs, rtol, atol, timing)
        _sync()

        def make_baseline():
            return _with_in_place(_resolve(_import_source(spec, "baseline"), spec["launcher"]), in_place)
        entry["baseline"] = measure("baseline", make_baseline)

        tf_source = args.get("tritonforge_source")
        if tf_source:
            def make_tf():
                _add_paths(spec)
                # In the kernel's package, where it has one (its relative imports resolve there);
                # autotuned kernels it shares with the kernel as written tune again for it.
                package = spec["module"].rpartition(".")[0] if spec.get("module") else None
                _worker_on_path()
                from tritonforge_worker.modules import reset_shared_autotuners
                reset_shared_autotuners(list(spec.get("pythonpath") or []) + [os.path.dirname(tf_source)])
                mod = suite.load_module(tf_source, "tritonforge", package or None)
                return _with_in_place(_resolve(mod, spec["launcher"]), in_place)
            entry["tritonforge"] = measure("tritonforge", make_tf)

        if hasattr(harness, "vendor"):
            def make_vendor():
                return _with_in_place(harness.vendor, in_place)
            entry["vendor"] = measure("vendor", make_vendor)

        result["cases"].append(entry)
        del inputs, refs, measure
        gc.collect()
        if not INTERPRET:
            torch.cuda.empty_cache()
    return result


def _cpu_call_ms(fn):
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


OPS = {"hello": op_hello, "ceilings": op_ceilings, "measure": op_measure, "measure_real": op_measure_real}


def main():
    # Replies go to the original stdout; everything printed by kernels and libraries to stderr.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        op = req.get("op")
        fatal = False
        t0 = time.time()
        try:
            if op == "exit":
                proto.write(json.dumps({"ok": True, "result": None}) + "\n")
                return
            result = OPS[op](req.get("args") or {})
            reply = {"ok": True, "result": result}
        except Fatal as exc:
            fatal = True
            reply = {"ok": False, "fatal": True, "error": str(exc)[:2000], "traceback": traceback.format_exc()[-3000:]}
        except Exception as exc:
            fatal = _is_fatal(exc)
            reply = {"ok": False, "fatal": fatal, "error": f"{type(exc).__name__}: {str(exc)[:2000]}",
                     "traceback": traceback.format_exc()[-3000:]}
        reply["seconds"] = time.time() - t0
        proto.write(json.dumps(reply, default=str) + "\n")
        proto.flush()
        if fatal:
            os._exit(3)


if __name__ == "__main__":
    main()

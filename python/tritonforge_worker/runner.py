"""The `run`, `warm`, `ceilings` and `profile_launch` ops: launch a variant of the user's source
on the GPU, verify it against the harness reference, and time it.

Verification (every checked run, for each of several seeds):
  * inputs come from the harness's make_inputs(case, seed); the launcher gets fresh copies,
    each inside a larger buffer whose guard bytes are checked afterwards (a write past the end
    of an input is caught), and the originals are compared bit for bit afterwards (an input
    modified in place is an error unless the task declares it an output);
  * every output the launcher allocates with torch.empty* is poisoned (NaN, or a sentinel for
    integers) and surrounded by guard regions that are checked afterwards (an unwritten element
    or a write past the end is caught); torch.zeros* / ones* get guards too;
  * the reference is computed on inputs upcast to float64 (unless the task says otherwise)
    and outputs are compared element by element with |out - ref| <= atol + rtol * |ref|, with
    per-dtype default tolerances (_DEFAULT_TOLERANCES) that the task's rtol / atol override;
    a NaN where the reference has none fails;
  * a kernel that does not finish within the hang timeout (check.hang_timeout_s, else
    $TRITONFORGE_HANG_TIMEOUT_S, else 30 s) is a `timeout`, and the worker exits (its CUDA
    context is stuck).
Timing: warm-up, then CUDA events around each call with the L2 flushed before it
(a 256 MiB write), each call queued behind a GPU sleep that outlasts the host's time to queue
it (so the launcher's Python never leaves the GPU idle inside the timed interval), as many
repetitions as the time budget allows; median, quartiles and the
noise (interquartile range over the median). For short kernels the launch is also captured in
a CUDA graph and replayed, which removes Python launch overhead; the reply says which method
gave the figure.
Also reported: the grid of each launch, the harness's flops(case) / bytes(case) when defined
("work"), and on request ("asm": ["ttgir", "ptx", "sass"]) the compiled texts of each kernel.

Environment variables read here: TRITONFORGE_HANG_TIMEOUT_S.
"""

import contextlib
import json
import math
import os
import random
import time

from . import backward as bw
from .errors import FatalWorkerError, TaskError, is_context_fatal
from .autotune_pin import pin_best
from .autotune_warm import compile_only
from .modules import load_module_from_path, reset_shared_autotuners, resolve_attr, unwrap_jit

# ---------------------------------------------------------------------------------------
# Launch recording: wraps JITFunction.run once, so that every launch (also through
# @triton.autotune / @triton.heuristics) is seen, and `warm` can compile without launching.


class _State:
    record = None
    warm_only = False
    variant = None  # the module of the last request's variant


def _install_launch_hook():
    from triton.runtime.jit import JITFunction
    if getattr(JITFunction, "_tf_hooked", False):
        return
    original = JITFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        record = _State.record
        seen = []
        if record is not None and not (warmup or _State.warm_only):
            if callable(grid):
                user_grid = grid

                def grid(meta, _grid=user_grid, _seen=seen):
                    value = _grid(meta)
                    _seen.append(value)
                    return value
            else:
                seen.append(grid)
        kernel = original(self, *args, grid=grid, warmup=warmup or _State.warm_only, **kwargs)
        if record is not None and kernel is not None:
            record.append((self, kernel, _grid_tuple(seen[0]) if seen else None))
        return kernel

    JITFunction.run = run
    JITFunction._tf_hooked = True


def _grid_tuple(grid):
    try:
        dims = [int(d) for d in (grid if isinstance(grid, (tuple, list)) else (grid,))]
    except (TypeError, ValueError):
        return None
    return (dims + [1, 1, 1])[:3]


@contextlib.contextmanager
def _recording(warm_only=False):
    _State.record = []
    _State.warm_only = warm_only
    try:
        yield _State.record
    finally:
        _State.record = None
        _State.warm_only = False


def _jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if hasattr(v, "value") and isinstance(getattr(v, "value"), (bool, int, float, str)):
        return v.value
    return str(v)


def _kernel_info(fn, kernel):
    md = kernel.metadata
    src = getattr(kernel, "src", None)
    names = list(getattr(fn, "arg_names", []))
    info = {
        "name": getattr(fn, "__name__", None) or getattr(md, "name", None),
        "num_warps": md.num_warps,
        "num_stages": md.num_stages,
        "num_ctas": getattr(md, "num_ctas", 1),
        "shared_bytes": md.shared,
        "registers": getattr(kernel, "n_regs", None),
        "spills": getattr(kernel, "n_spills", None),
    }
    if type(fn).__module__.startswith("triton.experimental.gluon"):
        info["dialect"] = "gluon"  # a Gluon kernel (a lowering's route), not a `tl` one
    if src is not None and hasattr(src, "signature"):
        info["signature"] = {k: str(v) for k, v in src.signature.items()}
        consts = {}
        for key, val in getattr(src, "constants", {}).items():
            idx = key[0] if isinstance(key, tuple) and key else key
            name = names[idx] if isinstance(idx, int) and idx < len(names) else str(key)
            if len(key) == 1:
                consts[name] = _jsonable(val)
        info["constexprs"] = consts
        attrs = {}
        for key, val in getattr(src, "attrs", {}).items():
            idx = key[0] if isinstance(key, tuple) and key else key
            name = names[idx] if isinstance(idx, int) and idx < len(names) else str(key)
            for item in val:
                if isinstance(item, (list, tuple)) and len(item) == 2 and item[0] == "tt.divisibility":
                    attrs[name] = item[1]
        info["divisibility"] = attrs
    return info


def _summarize_launches(records, asm=None):
    """One entry per distinct compiled kernel: its facts, how often it was launched, the grid
    of its first launch and, when `asm` names them, its compiled texts."""
    by_key = {}
    order = []
    for fn, kernel, grid in records:
        key = (id(fn), getattr(kernel, "hash", id(kernel)))
        if key not in by_key:
            by_key[key] = {"fn": fn, "kernel": kernel, "launches": 0, "grid": grid}
            order.append(key)
        by_key[key]["launches"] += 1
    out = []
    for key in order:
        entry = by_key[key]
        info = _kernel_info(entry["fn"], entry["kernel"])
        info["launches"] = entry["launches"]
        if entry["grid"] is not None:
            info["grid"] = entry["grid"]
        if asm:
            info["asm"] = _kernel_asm(entry["kernel"], asm)
        out.append(info)
    return out


def _kernel_asm(kernel, wanted):
    texts = {}
    for key in wanted:
        if key == "sass":
            from .compiled import cubin_facts
            facts = cubin_facts(kernel.asm.get("cubin"), want_sass=True)
            if "sass" in facts:
                texts["sass"] = facts["sass"]
            else:
                texts["sass_missing"] = facts.get("tool_missing", "cuobjdump failed")
        elif key in kernel.asm and isinstance(kernel.asm[key], str):
            texts[key] = kernel.asm[key]
    return texts


# ---------------------------------------------------------------------------------------
# Harness and inputs


class _Harness:
    def __init__(self, path, search_path):
        self.module = load_module_from_path(path, None, search_path)
        for name in ("make_inputs", "reference"):
            if not callable(getattr(self.module, name, None)):
                raise LookupError(f"{path}: harness has no function '{name}'")

    def make_inputs(self, case, seed):
        import numpy as np
        import torch
        random.seed(seed)
        np.random.seed(seed % (2**32))
        torch.manual_seed(seed)
        inputs = self.module.make_inputs(dict(case), seed)
        if not isinstance(inputs, (tuple, list)):
            inputs = (inputs,)
        return tuple(inputs)

    def work(self, case):
        """{"flops": x, "bytes": y} from the harness's optional flops(case) / bytes(case)."""
        out = {}
        for name in ("flops", "bytes"):
            fn = getattr(self.module, name, None)
            if not callable(fn):
                continue
            try:
                out[name] = float(fn(dict(case)))
            except Exception as exc:  # reported, not fatal: the roofline is optional
                out[f"{name}_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        return out


_HARNESSES = {}
_MODULES = {}


def _harness(path, search_path):
    h = _HARNESSES.get(path)
    if h is None:
        h = _Harness(path, search_path)
        _HARNESSES[path] = h
    return h


def _tensor_bytes(objs):
    import torch
    total = 0
    for o in objs:
        if isinstance(o, torch.Tensor):
            total += o.numel() * o.element_size()
        elif isinstance(o, (tuple, list)):
            total += _tensor_bytes(o)
    return total


def _cache_limit_bytes():
    import torch
    try:
        free, total = torch.cuda.mem_get_info()
        return int(min(total * 0.25, 24 * 2**30))
    except Exception:
        return 4 * 2**30


def _upcast(obj):
    import torch
    if isinstance(obj, torch.Tensor) and obj.is_floating_point() and obj.dtype != torch.float64:
        return obj.to(torch.float64)
    if isinstance(obj, tuple):
        return tuple(_upcast(o) for o in obj)
    if isinstance(obj, list):
        return [_upcast(o) for o in obj]
    return obj


class _Cache:
    """Inputs and reference outputs per (harness, case, seed), kept on the GPU up to a byte
    limit (oldest dropped first). Candidates get clones, so nothing they do reaches here."""

    def __init__(self):
        self.entries = {}
        self.order = []
        self.bytes = 0

    def get(self, key, build):
        hit = self.entries.get(key)
        if hit is not None:
            return hit[0]
        value = build()
        size = _tensor_bytes(value if isinstance(value, (tuple, list)) else [value])
        limit = _cache_limit_bytes()
        while self.order and self.bytes + size > limit:
            old = self.order.pop(0)
            self.bytes -= self.entries.pop(old)[1]
        self.entries[key] = (value, size)
        self.order.append(key)
        self.bytes += size
        return value


_CACHE = _Cache()


def _case_inputs(harness, path, case, seed):
    key = ("inputs", path, json.dumps(case, sort_keys=True), seed)
    return _CACHE.get(key, lambda: harness.make_inputs(case, seed))


def _case_reference(harness, path, case, seed, precision):
    """Returns (reference outputs, note). float64: floating inputs upcast first."""
    import torch
    key = ("ref", path, json.dumps(case, sort_keys=True), seed, precision)

    def build():
        expected = getattr(harness.module, "expected", None)
        if callable(expected):  # recorded outputs (a captured launch's replay): nothing to compute
            ref = expected(dict(case), seed)
            torch.cuda.synchronize()
            return (ref, None)
        inputs = _case_inputs(harness, path, case, seed)
        work = _clone(inputs)
        note = None
        with torch.no_grad():
            if precision == "float64":
                try:
                    ref = harness.module.reference(*_upcast(work))
                except Exception as exc:
                    note = (f"float64 reference failed ({type(exc).__name__}: {str(exc)[:200]}); "
                            "used the inputs' precision")
                    ref = harness.module.reference(*_clone(inputs))
            else:
                ref = harness.module.reference(*work)
        torch.cuda.synchronize()
        return (ref, note)

    return _CACHE.get(key, build)


def _clone(obj):
    import torch
    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, tuple):
        return tuple(_clone(o) for o in obj)
    if isinstance(obj, list):
        return [_clone(o) for o in obj]
    return obj


def _load_variant(variant, search_path):
    path = variant["path"]
    name = variant.get("module_name")
    key = (path, name)
    mod = _MODULES.get(key)
    if mod is None:
        mod = load_module_from_path(path, name, search_path, variant.get("package"))
        _MODULES[key] = mod
    return mod


# ---------------------------------------------------------------------------------------
# Poisoned, guarded allocation of outputs (and guarded copies of inputs)

_GUARD_BYTES = 4096


def _poison_value(dtype):
    import torch
    if dtype.is_floating_point:
        return float("nan")
    if dtype == torch.bool:
        return None
    if dtype.is_complex:
        return complex(float("nan"), float("nan"))
    info = torch.iinfo(dtype)
    return info.min + 7 if info.min < 0 else info.max - 7


def _guard_fill(buf):
    """Fills a guard region with a value a kernel is unlikely to write (NaN, an odd integer)."""
    p = _poison_value(buf.dtype)
    buf.fill_(True if p is None else p)


class _Poisoner:
    """Within `active()`, torch.empty / empty_like / new_empty return poisoned tensors, and
    torch.zeros / zeros_like / ones / ones_like tensors of that value, each inside a larger
    buffer whose guard regions broken_guard() checks afterwards. guarded_clone() does the
    same for the copies of the inputs the launcher gets."""

    def __init__(self):
        self.allocs = []
        self._orig_empty = None

    def _raw_empty(self, *args, **kw):
        import torch
        return (self._orig_empty or torch.empty)(*args, **kw)

    def _make(self, shape, dtype, device, requires_grad=False, fill="poison", label="an output tensor"):
        import torch
        if isinstance(shape, int):
            shape = (shape,)
        shape = tuple(int(s) for s in shape)
        dtype = dtype or torch.get_default_dtype()
        numel = 1
        for s in shape:
            numel *= s
        esize = dtype.itemsize
        guard = max(1, _GUARD_BYTES // esize)
        buf = self._raw_empty(numel + 2 * guard, dtype=dtype, device=device)
        _guard_fill(buf)
        view = buf[guard:guard + numel].view(shape)
        if fill != "poison":
            view.fill_(fill)
        self.allocs.append((label, buf, guard, numel, buf[:guard].clone(), buf[guard + numel:].clone()))
        if requires_grad:
            view.requires_grad_(True)
        return view

    def guarded_clone(self, obj, label="input"):
        """A copy of `obj` (tensors, tuples, lists of them) with guarded CUDA tensors."""
        import torch
        if isinstance(obj, torch.Tensor):
            if not obj.is_cuda or not obj.is_contiguous() or obj.numel() == 0 or obj.is_complex():
                return obj.clone()
            view = self._make(tuple(obj.shape), obj.dtype, obj.device, label=label)
            view.copy_(obj)
            return view
        if isinstance(obj, (tuple, list)):
            items = [self.guarded_clone(o, f"{label} {i}" if label == "input" else label)
                     for i, o in enumerate(obj)]
            return tuple(items) if isinstance(obj, tuple) else items
        return obj

    @staticmethod
    def _plain(layout, pin_memory, memory_format, out):
        import torch
        return out is not None or layout not in (None, torch.strided) or pin_memory or \
            memory_format not in (None, torch.contiguous_format, torch.preserve_format)

    @staticmethod
    def _size(size):
        import torch
        if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
            return tuple(size[0])
        return size

    def _factory(self, orig, fill):
        poisoner = self

        def make(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
                 pin_memory=False, memory_format=None, **kw):
            import torch
            dev = torch.device(device) if device is not None else torch.device("cpu")
            if poisoner._plain(layout, pin_memory, memory_format, out) or kw or dev.type != "cuda":
                extra = {k: v for k, v in (("out", out), ("layout", layout), ("memory_format", memory_format))
                         if v is not None}
                return orig(*size, dtype=dtype, device=device, requires_grad=requires_grad,
                            pin_memory=pin_memory, **extra, **kw)
            return poisoner._make(poisoner._size(size), dtype, dev, requires_grad, fill)
        return make

    def _like_factory(self, orig, fill):
        poisoner = self

        def make_like(t, *, dtype=None, layout=None, device=None, requires_grad=False,
                      memory_format=None, **kw):
            import torch
            dev = torch.device(device) if device is not None else t.device
            if dev.type != "cuda" or not t.is_contiguous() or kw or \
                    poisoner._plain(layout, False, memory_format, None):
                out = orig(t, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad,
                           memory_format=memory_format, **kw)
                if fill == "poison" and out.is_cuda:
                    _guard_fill(out)
                return out
            return poisoner._make(tuple(t.shape), dtype or t.dtype, dev, requires_grad, fill)
        return make_like

    def empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, **kw):
        out = self._orig_empty_strided(size, stride, dtype=dtype, layout=layout, device=device,
                                       requires_grad=requires_grad, **kw)
        if out.is_cuda:
            _guard_fill(out)
        return out

    def new_empty(self, t, size, *, dtype=None, device=None, requires_grad=False, **kw):
        import torch
        dev = torch.device(device) if device is not None else t.device
        if isinstance(size, int):
            size = (size,)
        if dev.type != "cuda" or kw:
            return self._orig_new_empty(t, size, dtype=dtype, device=device, requires_grad=requires_grad, **kw)
        return self._make(tuple(size), dtype or t.dtype, dev, requires_grad)

    _PATCHED = ("empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like")

    @contextlib.contextmanager
    def active(self):
        import torch
        saved = {name: getattr(torch, name) for name in self._PATCHED}
        self._orig_empty = saved["empty"]
        self._orig_empty_strided = saved["empty_strided"]
        self._orig_new_empty = torch.Tensor.new_empty
        poisoner = self
        torch.empty = self._factory(saved["empty"], "poison")
        torch.zeros = self._factory(saved["zeros"], 0)
        torch.ones = self._factory(saved["ones"], 1)
        torch.empty_like = self._like_factory(saved["empty_like"], "poison")
        torch.zeros_like = self._like_factory(saved["zeros_like"], 0)
        torch.ones_like = self._like_factory(saved["ones_like"], 1)
        torch.empty_strided = self.empty_strided
        torch.Tensor.new_empty = lambda t, *size, **kw: poisoner.new_empty(
            t, size[0] if len(size) == 1 and not isinstance(size[0], int) else size, **kw)
        try:
            yield self
        finally:
            for name, fn in saved.items():
                setattr(torch, name, fn)
            torch.Tensor.new_empty = self._orig_new_empty

    def broken_guard(self):
        """The label of the first tensor whose guard bytes changed ("an output tensor",
        "input 1"), or None."""
        for label, buf, guard, numel, before, after in self.allocs:
            if not (_bitwise_equal(buf[:guard], before) and _bitwise_equal(buf[guard + numel:], after)):
                return label
        return None


def _bitwise_equal(a, b):
    import torch
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.is_floating_point or a.dtype.is_complex:
        size = a.element_size()
        itype = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}.get(size)
        if itype is None or a.dtype.is_complex:
            return bool(torch.equal(a.view(torch.uint8), b.view(torch.uint8)))
        return bool(torch.equal(a.contiguous().view(itype), b.contiguous().view(itype)))
    return bool(torch.equal(a, b))


def _same_inputs(before, after):
    import torch
    if isinstance(before, torch.Tensor):
        return isinstance(after, torch.Tensor) and _bitwise_equal(before, after)
    if isinstance(before, (tuple, list)):
        return len(before) == len(after) and all(_same_inputs(a, b) for a, b in zip(before, after))
    return True


# ---------------------------------------------------------------------------------------
# Comparison


def _as_list(out):
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


# Per-dtype default tolerances (rtol, atol) of an output, when the task sets none: about four
# units in the last place of the output type, room for a different summation order. Integers
# and booleans compare exactly.
_DEFAULT_TOLERANCES = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-4, 1e-5),
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
    "float8_e4m3fn": (1.25e-1, 1.25e-1),
    "float8_e4m3fnuz": (1.25e-1, 1.25e-1),
    "float8_e5m2": (2.5e-1, 2.5e-1),
    "float8_e5m2fnuz": (2.5e-1, 2.5e-1),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def tolerance_for(dtype_name, rtol=None, atol=None):
    """(rtol, atol) for an output of `dtype_name` ("float16", "torch.float16"); the task's
    rtol / atol, where given, win over the defaults."""
    name = str(dtype_name).replace("torch.", "")
    default = _DEFAULT_TOLERANCES.get(name)
    if default is None:
        default = (1e-4, 1e-5) if name.startswith(("float", "complex")) else (0.0, 0.0)
    return (float(rtol) if rtol is not None else default[0], float(atol) if atol is not None else default[1])


def _compare(outputs, refs, rtol=None, atol=None, output_atol=None):
    """Returns (passed, details). Element-wise |o - r| <= atol + rtol * |r| with the tolerances
    of each output's dtype (tolerance_for); `output_atol` (one per output, the task's
    check.output_atol) gives output i its own atol. NaN must match."""
    import torch
    details = {"max_abs_err": 0.0, "max_rel_err": 0.0, "outputs": len(outputs), "tolerances": []}
    if len(outputs) != len(refs):
        details["reason"] = f"launcher returned {len(outputs)} outputs, reference {len(refs)}"
        return False, details
    per_output = list(output_atol or [])
    for i, (o, r) in enumerate(zip(outputs, refs)):
        o_given_atol = per_output[i] if i < len(per_output) else atol
        if not isinstance(r, torch.Tensor):
            if isinstance(o, torch.Tensor) and o.numel() == 1:
                o = o.item()
            s_rtol, s_atol = tolerance_for("float64" if isinstance(r, float) else "int64", rtol, o_given_atol)
            ok = (o == r) if not isinstance(r, float) else abs(float(o) - r) <= s_atol + s_rtol * abs(r)
            if not ok:
                details.update(reason=f"output {i}: got {o!r}, expected {r!r}", first_bad={"output": i})
                return False, details
            continue
        if not isinstance(o, torch.Tensor):
            details["reason"] = f"output {i} is {type(o).__name__}, expected a tensor"
            return False, details
        if tuple(o.shape) != tuple(r.shape):
            details["reason"] = f"output {i} has shape {tuple(o.shape)}, expected {tuple(r.shape)}"
            return False, details
        if o.device != r.device:
            r = r.to(o.device)
        o_rtol, o_atol = tolerance_for(o.dtype, rtol, o_given_atol)
        details["tolerances"].append({"output": i, "dtype": str(o.dtype).replace("torch.", ""),
                                      "rtol": o_rtol, "atol": o_atol})
        if not (o.dtype.is_floating_point or o.dtype.is_complex) and not r.dtype.is_floating_point:
            bad = o.to(torch.int64) != r.to(torch.int64)
            if bool(bad.any()):
                idx = torch.nonzero(bad)[0].tolist()
                details.update(reason=f"output {i}: {int(bad.sum())} elements differ",
                               first_bad={"output": i, "index": idx, "got": o[tuple(idx)].item(),
                                          "expected": r[tuple(idx)].item()})
                return False, details
            continue
        o64 = o.to(torch.float64)
        r64 = r.to(torch.float64)
        diff = (o64 - r64).abs()
        tol = o_atol + o_rtol * r64.abs()
        nan_ok = torch.isnan(o64) & torch.isnan(r64)
        inf_ok = torch.isinf(r64) & (o64 == r64)
        good = (diff <= tol) | nan_ok | inf_ok
        finite = torch.isfinite(diff)
        if bool(finite.any()):
            d = diff[finite]
            details["max_abs_err"] = max(details["max_abs_err"], float(d.max()))
            rel = d / r64.abs()[finite].clamp_min(1e-30)
            details["max_rel_err"] = max(details["max_rel_err"], float(rel.max()))
        if not bool(good.all()):
            bad = ~good
            count = int(bad.sum())
            idx = torch.nonzero(bad)[0].tolist()
            got = o64[tuple(idx)].item()
            exp = r64[tuple(idx)].item()
            kind = "NaN (never written?)" if math.isnan(got) else \
                f"outside tolerance: rtol {o_rtol:g}, atol {o_atol:g}"
            details.update(reason=f"output {i}: {count} of {o.numel()} elements wrong, first at {idx}: "
                                  f"got {got:.6g}, expected {exp:.6g} ({kind})",
                           bad_count=count,
                           first_bad={"output": i, "index": idx, "got": _finite_or_str(got),
                                      "expected": _finite_or_str(exp)})
            return False, details
    return True, details


def _finite_or_str(x):
    return x if math.isfinite(x) else repr(x)


def _output_signature(outputs):
    import torch
    sig = []
    for o in outputs:
        if isinstance(o, torch.Tensor):
            sig.append({"shape": list(o.shape), "dtype": str(o.dtype).replace("torch.", "")})
        else:
            sig.append({"type": type(o).__name__})
    return sig


def _argument_signature(launcher, inputs):
    """What the launcher was called with, per positional argument: its parameter's name (None
    past the named ones), and a tensor's shape and dtype or an int's value: the shape features
    a per-shape dispatch can pick by (the core's dispatch_plan)."""
    import inspect
    import torch
    names = []
    try:
        for p in inspect.signature(launcher).parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(p.name)
            elif p.kind == p.VAR_POSITIONAL:
                break
    except (TypeError, ValueError):
        names = []
    sig = []
    for i, v in enumerate(inputs):
        entry = {"name": names[i] if i < len(names) else None}
        if isinstance(v, torch.Tensor):
            entry["shape"] = [int(d) for d in v.shape]
            entry["dtype"] = str(v.dtype).replace("torch.", "")
        elif isinstance(v, int) and not isinstance(v, bool):
            entry["value"] = int(v)
        sig.append(entry)
    return sig


# ---------------------------------------------------------------------------------------
# Timing

_FLUSH = [None]


def _flush_buffer():
    import torch
    if _FLUSH[0] is None:
        _FLUSH[0] = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
    return _FLUSH[0]


def _quantiles(values):
    v = sorted(values)
    n = len(v)

    def q(p):
        if n == 1:
            return v[0]
        pos = p * (n - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, n - 1)
        return v[lo] + (v[hi] - v[lo]) * (pos - lo)

    return q(0.25), q(0.5), q(0.75)


_SLEEP_RATE = []


def _sleep_cycles_per_ms():
    """Clock cycles per millisecond of torch.cuda._sleep (a kernel that spins for a number of
    cycles), measured once; None where torch has no _sleep."""
    import torch
    if not _SLEEP_RATE:
        rate = None
        sleep = getattr(torch.cuda, "_sleep", None)
        if sleep is not None:
            try:
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                sleep(1000)
                start.record()
                sleep(2_000_000)
                end.record()
                torch.cuda.synchronize()
                ms = start.elapsed_time(end)
                rate = 2_000_000 / ms if ms > 0 else None
            except Exception:  # noqa: BLE001 -- timing then runs without the head start
                rate = None
        _SLEEP_RATE.append(rate)
    return _SLEEP_RATE[0]


def _time_events(fn, budget_ms, min_reps, max_reps, flush, ahead=True):
    """CUDA-event times (ms) of fn, one per repetition, the L2 flushed before each when asked.

    With `ahead`, each repetition is queued behind a GPU sleep longer than the host needs to
    queue the repetition (the launcher's Python, measured here), so the GPU never waits for the
    host between the start and end events: a heavy launcher (an autograd.Function, allocations)
    in front of a short kernel would otherwise put its host time, and any delay of the host
    process under CPU load, inside the timed interval."""
    import torch
    cache = _flush_buffer() if flush else None
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    # Estimate one call, on the GPU and on the host.
    fn()
    torch.cuda.synchronize()
    host0 = time.perf_counter()
    start.record()
    for _ in range(3):
        if cache is not None:
            cache.zero_()
        fn()
    end.record()
    host_ms = (time.perf_counter() - host0) * 1e3 / 3
    torch.cuda.synchronize()
    est = max(start.elapsed_time(end) / 3, 1e-3)
    rate = _sleep_cycles_per_ms() if ahead else None
    sleep_ms = min(1.5 * host_ms + 0.02, 50.0) if rate else 0.0
    reps = int(max(min_reps, min(max_reps, budget_ms / (est + sleep_ms))))
    warm = max(1, min(25, reps // 10))
    for _ in range(warm):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    cycles = int(sleep_ms * rate) if rate else 0
    for i in range(reps):
        if cycles:
            torch.cuda._sleep(cycles)
        if cache is not None:
            cache.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def _time_graph(fn, budget_ms, min_reps, max_reps, flush):
    import torch
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    torch.cuda.synchronize()
    return _time_events(graph.replay, budget_ms, min_reps, max_reps, flush)


def summarize_times(times, method):
    """Median, quartiles, interquartile range and noise (IQR / median) of timed runs (ms)."""
    q1, med, q3 = _quantiles(times)
    return {
        "median_ms": med, "q1_ms": q1, "q3_ms": q3, "iqr_ms": q3 - q1,
        "min_ms": min(times), "max_ms": max(times), "mean_ms": sum(times) / len(times),
        "noise": (q3 - q1) / med if med > 0 else 0.0,
        "reps": len(times), "method": method,
    }


def _timing(fn, opts):
    budget = float(opts.get("budget_ms", 400))
    min_reps = int(opts.get("min_reps", 10))
    max_reps = int(opts.get("max_reps", 2000))
    flush = bool(opts.get("flush", True))
    method = opts.get("method", "auto")
    times = _time_events(fn, budget, min_reps, max_reps, flush)
    used = "events+l2flush" if flush else "events"
    _, med, _ = _quantiles(times)
    graph_note = None
    if method == "graph" or (method == "auto" and med < float(opts.get("graph_below_ms", 0.05))):
        try:
            times = _time_graph(fn, budget, min_reps, max_reps, flush)
            used = "cuda-graph+l2flush" if flush else "cuda-graph"
        except Exception as exc:  # a launcher that syncs or allocates on the host cannot be captured
            graph_note = f"graph capture failed: {type(exc).__name__}: {str(exc)[:160]}"
    result = summarize_times(times, used)
    if graph_note:
        result["note"] = graph_note
    return result


# ---------------------------------------------------------------------------------------
# Failure classification


class CandidateFailure(Exception):
    pass


def _classify(exc):
    name = type(exc).__name__
    text = f"{name}: {exc}"
    low = text.lower()
    if name in ("OutOfResources",) or "outofresources" in low.replace(" ", "") or \
            "out of resource" in low or name == "OutOfMemoryError" or "out of memory" in low:
        return "out-of-resources"
    if name in ("CompilationError", "CompileTimeAssertionFailure", "MLIRCompilationError", "PTXASError") or \
            "compilationerror" in low or "ptxas" in low:
        return "compile-error"
    return "runtime-error"


def _fail(status, exc, stage):
    message = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    if is_context_fatal(exc):
        err = FatalWorkerError(f"{stage}: {message}")
        err.tf_data = {"status": "crash", "stage": stage}
        raise err from exc
    return {"status": status, "stage": stage, "message": message[:2000]}


# ---------------------------------------------------------------------------------------
# Ops


def _prepare(args):
    import torch
    _install_launch_hook()
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA GPU is visible to the worker")
    search_path = args.get("search_path") or []
    harness_path = args["harness"]
    harness = _harness(harness_path, search_path)
    module = _load_variant(args["variant"], search_path)
    if _State.variant is not module:
        # Another variant than the last request's: autotuned kernels it shares with it (imported
        # from the package's other modules) tune again for it, as in a process of its own.
        variant_dir = os.path.dirname(os.path.abspath(args["variant"]["path"]))
        reset_shared_autotuners(list(search_path) + [variant_dir], keep=module)
        _State.variant = module
    launcher = resolve_attr(module, args["launcher"])
    if not callable(launcher):
        raise LookupError(f"{args['variant']['path']}: no function '{args['launcher']}'")
    return harness, harness_path, module, launcher


def op_preload(args):
    """What a compile worker's first `warm` would pay before compiling anything, paid ahead:
    the harness and the variant imported (with the packages they import: a real project's
    import can take seconds), and the inputs of the cases the request lists (the core lists
    none while the baseline is timed: that would be GPU work beside it)."""
    t0 = time.time()
    harness, harness_path, module, launcher = _prepare(args)
    for case in args.get("cases") or []:
        _case_inputs(harness, harness_path, case, 0)
    return {"status": "ok", "seconds": time.time() - t0}


def _is_device_oom(exc):
    """torch's CUDA out-of-memory (the device's memory is full), not Triton's OutOfResources
    (a kernel asking for more shared memory or registers than a block may have)."""
    import torch
    oom = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or "CUDA out of memory" in str(exc)


def _release_gpu_memory():
    import gc
    import torch
    gc.collect()
    torch.cuda.empty_cache()


def _warm_inputs(harness, harness_path, case):
    """The case's inputs for a compile: the cached ones (cloned) where this worker has them,
    else made afresh and not kept. A compile worker keeps no inputs between requests: fifteen
    of them each holding an LLM-sized case's tensors would fill the GPU that the measurement
    worker needs."""
    key = ("inputs", harness_path, json.dumps(case, sort_keys=True), 0)
    hit = _CACHE.entries.get(key)
    if hit is not None:
        return _clone(hit[0])
    return harness.make_inputs(case, 0)


def op_warm(args):
    """Compiles everything the launcher would launch for each case, without launching. A
    backward task runs the forward (its kernels launch) and compiles what the backward would.

    The inputs are real tensors on the GPU, and other processes (the measurement worker, the
    other compile workers) share its memory: a CUDA out-of-memory error is not the variant's
    fault. The worker then frees what it holds and tries again, with backoff, for up to
    `memory_wait_s` seconds (the core's share of this compile's time limit); if the memory
    never comes free, the reply is `not-run` (not measured, nothing blamed).

    An @triton.autotune kernel compiles each configuration once, without its benchmark
    (autotune_warm.py); `autotune_part: [i, n]` compiles only the i-th of n shares of its list,
    the other shares being compiled by other workers at the same time."""
    import torch
    harness, harness_path, module, launcher = _prepare(args)
    backward = args.get("direction") == "backward"
    wait_s = float(args.get("memory_wait_s") or 0)
    part = args.get("autotune_part")
    part = (int(part[0]), int(part[1])) if part else None
    variant_file = getattr(module, "__file__", None)
    roots = list(args.get("search_path") or []) + ([os.path.dirname(os.path.abspath(variant_file))] if variant_file else [])
    kernels = []
    t0 = time.time()
    pause = 0.2
    for case in args["cases"]:
        while True:
            work = None
            try:
                work = _warm_inputs(harness, harness_path, case)
                if backward:
                    idx = bw.grad_indices(harness.module, case, work)
                    leaves, outs = bw.forward(launcher, work, idx)
                    grads = bw.grad_outputs(harness.module, case, 0, outs)
                    with _recording(warm_only=True) as rec, compile_only(roots, module, part):
                        bw.gradients(outs, leaves, idx, grads)
                else:
                    with _recording(warm_only=True) as rec, compile_only(roots, module, part), torch.no_grad():
                        launcher(*work)
                break
            except TaskError:
                raise
            except Exception as exc:
                if not _is_device_oom(exc):
                    return _fail(_classify(exc), exc, "compile")
                work = leaves = outs = grads = None
                _release_gpu_memory()
                if time.time() - t0 + pause > wait_s:
                    return {"status": "not-run", "stage": "compile",
                            "message": "the GPU's memory was held by other processes for the whole "
                                       f"{wait_s:g} s this compile could wait (CUDA out of memory while "
                                       "making the case's inputs or running the launcher)"}
                time.sleep(pause * (0.5 + random.random()))
                pause = min(pause * 2, 2.0)
        rec, exc = load_compiled(rec)
        if exc is not None:
            return _fail(_classify(exc), exc, "load")
        kernels.extend(_summarize_launches(rec))
        work = leaves = outs = grads = None
    _release_gpu_memory()
    return {"status": "ok", "kernels": kernels, "seconds": time.time() - t0}


def load_compiled(records):
    """Loads each recorded compiled kernel (where shared memory and registers are checked
    against the GPU). Returns (the records that loaded, None), or (None, the error) when one
    fails. A kernel compiled once per @triton.autotune config needs one config that loads: the
    autotuner skips those out of resources when it benchmarks them, and so does this."""
    kept, out_of_resources, loaded = [], {}, set()
    for record in records:
        fn, kernel = record[0], record[1]
        try:
            kernel._init_handles()
        except Exception as exc:
            if _classify(exc) != "out-of-resources":
                return None, exc
            out_of_resources.setdefault(id(fn), exc)
            continue
        loaded.add(id(fn))
        kept.append(record)
    for key, exc in out_of_resources.items():
        if key not in loaded:
            return None, exc
    return kept, None


def _hang_timeout(check):
    value = check.get("hang_timeout_s") or os.environ.get("TRITONFORGE_HANG_TIMEOUT_S") or 30
    return float(value)


def _wait_gpu(timeout_s, stage):
    """Waits for the GPU's queued work like torch.cuda.synchronize(), but gives up after
    `timeout_s`: a hung kernel ends this worker (a FatalWorkerError with status `timeout`)."""
    import torch
    done = torch.cuda.Event()
    done.record()
    t0 = time.monotonic()
    pause = 1e-4
    while not done.query():
        if time.monotonic() - t0 > timeout_s:
            err = FatalWorkerError(f"{stage}: the kernel did not finish within {timeout_s:g} s (a hang?)")
            err.tf_data = {"status": "timeout", "stage": stage}
            raise err
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
    torch.cuda.synchronize()


def check_in_place(in_place, n_inputs):
    """Refuses check.in_place indices that name no input of make_inputs (the task loader can
    only check that they are integers >= 0: the number of inputs is the harness's)."""
    for pos, index in enumerate(in_place):
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n_inputs:
            valid = f"indices 0 to {n_inputs - 1}" if n_inputs > 0 else "no index is valid"
            err = TaskError(f"check.in_place[{pos}] = {index} names no input: make_inputs returned "
                            f"{n_inputs} input{'' if n_inputs == 1 else 's'} ({valid})")
            err.tf_data = {"key": f"check.in_place[{pos}]", "index": index, "inputs": n_inputs}
            raise err


def _note_errors(result, details):
    """Folds one comparison's largest errors and applied tolerances into result["verify"]."""
    v = result["verify"]
    v["max_abs_err"] = max(v["max_abs_err"], details.get("max_abs_err", 0.0))
    v["max_rel_err"] = max(v["max_rel_err"], details.get("max_rel_err", 0.0))
    if details.get("tolerances"):
        v["tolerances"] = details["tolerances"]


def _mark_wrong(result, seed, reason, details=None):
    """A wrong result at `seed`: the status, the reason and the first bad element."""
    result["status"] = "wrong-result"
    result["verify"].update(passed=False, failed_seed=seed, reason=reason)
    if details and "first_bad" in details:
        result["verify"]["first_bad"] = details["first_bad"]


def _run_backward(args, harness, harness_path, launcher):
    """op_run for a backward task: the launcher's outputs and then the gradients of its
    floating outputs are checked against the reference's, and the backward alone is timed (on
    one forward graph, kept with retain_graph)."""
    import torch
    check = args.get("check") or {}
    rtol, atol = check.get("rtol"), check.get("atol")
    float64 = check.get("reference_precision", "float64") == "float64"
    hang_s = _hang_timeout(check)
    seeds = list(args.get("seeds") or [0])
    case = args["case"]
    result = {"status": "ok", "verify": {"passed": True, "seeds": seeds, "max_abs_err": 0.0, "max_rel_err": 0.0}}
    kernels = []
    out_sig = None
    for seed in seeds:
        inputs = _case_inputs(harness, harness_path, case, seed)
        idx = bw.grad_indices(harness.module, case, inputs)
        work = _clone(inputs)
        forward_outputs = []
        try:
            leaves, outs = bw.forward(launcher, work, idx, everything=forward_outputs)
            _wait_gpu(hang_s, f"forward (seed {seed})")
        except (FatalWorkerError, TaskError):
            raise
        except Exception as exc:
            return _fail(_classify(exc), exc, f"forward (seed {seed})")
        # The forward's outputs first (a backward may write over them): a backward task never
        # hands back a forward that changed.
        ref, _ = _case_reference(harness, harness_path, case, seed, "float64" if float64 else "as-is")
        with torch.no_grad():
            passed, details = _compare([o.detach() if isinstance(o, torch.Tensor) else o for o in forward_outputs],
                                       _as_list(ref), rtol, atol)
        if not passed:
            _mark_wrong(result, seed, "forward " + str(details.get("reason")), details)
            break
        grads = bw.grad_outputs(harness.module, case, seed, outs)
        # The reference's copy: a backward may compute in place over its output gradient.
        key = ("ref-grad", harness_path, json.dumps(case, sort_keys=True), seed, float64)
        ref_grads = [g.clone() for g in grads]
        refs = _CACHE.get(key, lambda: bw.reference_gradients(harness.module, _clone(inputs), idx, ref_grads, float64))
        try:
            with _recording() as rec:
                got = bw.gradients(outs, leaves, idx, grads)
            _wait_gpu(hang_s, f"backward (seed {seed})")
        except (FatalWorkerError, TaskError):
            raise
        except Exception as exc:
            return _fail(_classify(exc), exc, f"backward (seed {seed})")
        if not kernels:
            kernels = _summarize_launches(rec, args.get("asm"))
        if not rec:
            _mark_wrong(result, seed, "the backward launched no Triton kernel")
            break
        if out_sig is None:
            out_sig = _output_signature(got)
        passed, details = _compare(got, refs, rtol, atol)
        _note_errors(result, details)
        if not passed:
            _mark_wrong(result, seed, "gradient " + str(details.get("reason")), details)
            break
    result["kernels"] = kernels
    result["outputs"] = out_sig
    result["work"] = harness.work(case)
    timing_opts = args.get("timing") or {}
    if result["status"] == "ok" and timing_opts.get("enabled", True):
        try:
            inputs = _clone(_case_inputs(harness, harness_path, case, seeds[0]))
            idx = bw.grad_indices(harness.module, case, inputs)
            leaves, outs = bw.forward(launcher, inputs, idx)
            grads = bw.grad_outputs(harness.module, case, seeds[0], outs)

            def call():
                bw.gradients(outs, leaves, idx, grads, retain_graph=True)

            result["timing"] = _timing(call, timing_opts)
        except Exception as exc:
            return _fail(_classify(exc), exc, "timing")
    return result


def _pin_autotuners(args, module, call, opts):
    """Gives each autotuner the launcher used its best configuration before the timing
    (autotune_pin.py); the notes, or None when nothing autotunes."""
    if not opts.get("pin_autotune", True):
        return None
    roots = list(args.get("search_path") or []) + [os.path.dirname(os.path.abspath(args["variant"]["path"]))]
    budget = max(20.0, float(opts.get("budget_ms", 400)) / 4)
    flush = bool(opts.get("flush", True))

    def time_call():
        return _quantiles(_time_events(call, budget, 5, 500, flush))[1]

    return pin_best(roots, module, time_call) or None


_SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize")


def _launcher_timeline(call):
    """One call of the launcher under torch.profiler with CUDA activity: how the GPU's time
    splits between the Triton kernels it launches, other kernels (torch's glue around them: a
    reduction before or after, a fill, an elementwise pass), copies and fills, and how often the
    host waited for the GPU (a .item(), a .cpu(), an explicit synchronize). None without CUDA."""
    import torch
    if not torch.cuda.is_available():
        return None
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with _recording() as rec:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            t0 = time.perf_counter()
            call()
            torch.cuda.synchronize()  # ours: not counted among the launcher's syncs
            wall_ms = (time.perf_counter() - t0) * 1e3
    triton_names = {getattr(k.metadata, "name", None) for _, k, _ in rec} - {None}
    totals = {"triton": 0.0, "other": 0.0, "copy": 0.0}
    launches = 0
    outside = {}  # (kind, name) -> [ms, count], for the kernels and copies not Triton's
    syncs = -1
    for e in prof.events():
        if e.device_type == DeviceType.CUDA:
            ms = e.time_range.elapsed_us() / 1e3
            if e.name.startswith("Memcpy") or e.name.startswith("Memset"):
                kind = "copy"
            elif e.name in triton_names:
                kind = "triton"
            else:
                kind = "other"
            totals[kind] += ms
            if kind == "triton":
                launches += 1
                continue
            g = outside.setdefault((kind, e.name[:100]), [0.0, 0])
            g[0] += ms
            g[1] += 1
        elif e.name in _SYNC_CALLS:
            syncs += 1
    ranked = sorted(outside.items(), key=lambda item: item[1][0], reverse=True)
    return {
        "wall_ms": wall_ms,
        "gpu_ms": sum(totals.values()),
        "triton_ms": totals["triton"],
        "triton_launches": launches,
        "other_ms": totals["other"],
        "copy_ms": totals["copy"],
        "outside": [{"name": n, "kind": k, "ms": ms, "count": c} for (k, n), (ms, c) in ranked[:6]],
        "host_syncs": max(0, syncs),
    }


def _timeline_of(launcher, work):
    """The launcher's timeline on `work` (compiled and warm already), or why there is none."""
    import torch
    try:
        with torch.no_grad():
            launcher(*work)
            timeline = _launcher_timeline(lambda: launcher(*work))
        return {"timeline": timeline} if timeline else {}
    except FatalWorkerError:
        raise
    except Exception as exc:  # the profiler is a diagnosis: its failure is not the run's
        return {"timeline_error": f"{type(exc).__name__}: {exc}"}


def op_run(args):
    import torch
    harness, harness_path, module, launcher = _prepare(args)
    if args.get("direction") == "backward":
        return _run_backward(args, harness, harness_path, launcher)
    check = args.get("check") or {}
    rtol = check.get("rtol")
    atol = check.get("atol")
    precision = check.get("reference_precision", "float64")
    in_place = list(check.get("in_place") or [])
    hang_s = _hang_timeout(check)
    seeds = list(args.get("seeds") or [0])
    case = args["case"]
    result = {"status": "ok", "verify": {"passed": True, "seeds": seeds, "max_abs_err": 0.0, "max_rel_err": 0.0}}
    kernels = []
    out_sig = None
    setup_s = 0.0
    for seed in seeds:
        t_setup = time.time()
        inputs = _case_inputs(harness, harness_path, case, seed)
        check_in_place(in_place, len(inputs))
        ref, note = _case_reference(harness, harness_path, case, seed, precision)
        # What a process without the case's cached inputs and references pays again (the
        # core's estimate of a fresh process's confirmation).
        setup_s += time.time() - t_setup
        if note:
            result["verify"]["reference_note"] = note
        poisoner = _Poisoner()
        work = poisoner.guarded_clone(inputs)
        try:
            with _recording() as rec, torch.no_grad(), poisoner.active():
                out = launcher(*work)
            _wait_gpu(hang_s, f"launch (seed {seed})")
        except FatalWorkerError:
            raise
        except Exception as exc:
            return _fail(_classify(exc), exc, f"launch (seed {seed})")
        if not kernels:
            kernels = _summarize_launches(rec, args.get("asm"))
        if not rec:
            _mark_wrong(result, seed, "the launcher launched no Triton kernel")
            break
        if out is None and in_place:
            outputs = [work[i] for i in in_place]
        else:
            outputs = _as_list(out)
        if out_sig is None:
            out_sig = _output_signature(outputs)
            result["arguments"] = _argument_signature(launcher, inputs)
        refs = _as_list(ref)
        passed, details = _compare(outputs, refs, rtol, atol, check.get("output_atol"))
        _note_errors(result, details)
        broken = poisoner.broken_guard() if passed else None
        if broken is not None:
            passed = False
            details["reason"] = f"a write landed outside {broken} (guard bytes changed)"
        if passed:
            changed = [i for i, (a, b) in enumerate(zip(inputs, work)) if i not in in_place and not _same_inputs(a, b)]
            if changed:
                passed = False
                details["reason"] = f"input {changed[0]} was modified in place (the task declares no in-place output)"
        if not passed:
            _mark_wrong(result, seed, details.get("reason"), details)
            break
    result["kernels"] = kernels
    result["outputs"] = out_sig
    result["setup_seconds"] = setup_s
    result["work"] = harness.work(case)
    if args.get("timeline") and result["status"] == "ok":
        result.update(_timeline_of(launcher, _clone(_case_inputs(harness, harness_path, case, seeds[0]))))
    timing_opts = args.get("timing") or {}
    if result["status"] == "ok" and timing_opts.get("enabled", True):
        work = _clone(_case_inputs(harness, harness_path, case, seeds[0]))

        def call():
            launcher(*work)

        try:
            with torch.no_grad():
                pinned = _pin_autotuners(args, module, call, timing_opts)
                if pinned:
                    result["autotune"] = pinned
                result["timing"] = _timing(call, timing_opts)
        except Exception as exc:
            return _fail(_classify(exc), exc, "timing")
    return result


def op_profile_launch(args):
    """Runs the launcher `warmup` times (compiling, autotuning), then once more between
    cudaProfilerStart and cudaProfilerStop, so that `ncu --profile-from-start off` profiles
    exactly the kernels of that one call. Does not verify (`run` does)."""
    import torch
    harness, harness_path, module, launcher = _prepare(args)
    case = args["case"]
    seed = int(args.get("seed", 0))
    warmup = max(1, int(args.get("warmup", 2)))
    work = _clone(_case_inputs(harness, harness_path, case, seed))
    hang_s = _hang_timeout(args.get("check") or {})
    with torch.no_grad():
        for _ in range(warmup):
            launcher(*work)
        _wait_gpu(hang_s, "warm-up")
        torch.cuda.profiler.start()
        try:
            with _recording() as rec:
                launcher(*work)
            _wait_gpu(hang_s, "profiled launch")
        finally:
            torch.cuda.profiler.stop()
    return {"status": "ok", "kernels": _summarize_launches(rec), "warmup": warmup,
            "work": harness.work(case)}


def op_ceilings(args):
    """Measures the GPU's ceilings: DRAM bandwidth (a device-to-device copy, bytes read +
    written) and the dense matrix rates of the vendor library: fp16, bf16 and tf32 on tensor
    cores, and fp32 without them (tf32 off)."""
    import torch
    out = {"flops_per_s": {}}
    props = torch.cuda.get_device_properties(0)
    out["gpu"] = props.name
    n = int(args.get("copy_bytes", 2 * 2**30))
    a = torch.empty(n // 4, dtype=torch.float32, device="cuda")
    a.normal_()
    b = torch.empty_like(a)
    t = _time_events(lambda: b.copy_(a), 300, 10, 200, False)
    _, med, _ = _quantiles(t)
    out["dram_bytes_per_s"] = 2 * n / (med * 1e-3)
    del a, b
    size = int(args.get("matmul_size", 8192))
    previous = torch.backends.cuda.matmul.allow_tf32
    try:
        for name, dtype, tf32 in (("fp16", torch.float16, False), ("bf16", torch.bfloat16, False),
                                  ("tf32", torch.float32, True), ("fp32", torch.float32, False)):
            x = torch.randn(size, size, device="cuda", dtype=dtype)
            y = torch.randn(size, size, device="cuda", dtype=dtype)
            torch.backends.cuda.matmul.allow_tf32 = tf32
            t = _time_events(lambda: torch.matmul(x, y), 500, 5, 50, False)
            _, med, _ = _quantiles(t)
            rate = 2 * size**3 / (med * 1e-3)
            out["flops_per_s"][name] = rate
            out[f"matmul_{name}_flops_per_s"] = rate
            del x, y
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    out["flops_per_s"].update(low_precision_rates(torch, size, out.setdefault("notes", [])))
    for name in ("fp8", "int8"):
        if name in out["flops_per_s"]:
            out[f"matmul_{name}_flops_per_s"] = out["flops_per_s"][name]
    if not out["notes"]:
        del out["notes"]
    return out


def low_precision_rates(torch, size, notes):
    """fp8 (torch._scaled_mm, per-tensor scales, bf16 out, fast accumulation: what Triton's fp8
    dot does on sm_90 by default) and int8 (torch._int_mm) rates where this torch and GPU have
    them; what is missing is a note, and the core then assumes twice fp16's rate."""
    rates = {}
    x = torch.randn(size, size, device="cuda")
    one = torch.ones((), device="cuda")
    if hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm"):
        try:
            a = x.to(torch.float8_e4m3fn)
            b = x.t().contiguous().to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants it
            t = _time_events(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                                      use_fast_accum=True), 500, 5, 50, False)
            rates["fp8"] = 2 * size**3 / (_quantiles(t)[1] * 1e-3)
        except Exception as exc:  # an older torch's signature, a GPU without fp8
            notes.append(f"fp8 rate not measured: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    if hasattr(torch, "_int_mm"):
        try:
            a = x.to(torch.int8)
            b = x.t().contiguous().to(torch.int8).t()
            t = _time_events(lambda: torch._int_mm(a, b), 500, 5, 50, False)
            rates["int8"] = 2 * size**3 / (_quantiles(t)[1] * 1e-3)
        except Exception as exc:
            notes.append(f"int8 rate not measured: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    return rates

"""Serves tuned kernels to a running program: `tritonforge run --overlay DIR -- python prog.py`.

The manifest (DIR/overlay/overlay.json, written by the binary from a capture's optimized replay
tasks: src/capture/overlay.cpp) lists per kernel the source file the program loads it from, that
file's sha256 when it was captured, the tuned copy of its module (the kernel as the search left
it, with the replay launcher the search tuned: constexprs, launch options, the grid rebuilt for
them) and the launches that launcher was verified on, as the program passed them.

A launch of a listed kernel is made by the tuned launcher when the program passes what one of
those launches passed: the same parameters, tensors of the same dtype, shape, strides and
alignment, the same integers, and the same values for what the launcher binds (constexprs,
options). Every other launch runs exactly as the program wrote it. The program's own modules
are never replaced and no installed file is touched: the tuned module is loaded beside the
original (inside its package, so that its relative imports work), and only when the original
file's sha256 is still the captured one (otherwise it says so and the kernel runs as written).

Per process, what was served is printed at exit (one line per kernel) and, with
$TRITONFORGE_OVERLAY_STATS set, written to that folder as <pid>.json.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import sys
import threading

from .. import modules
from . import describe

ENV_MANIFEST = "TRITONFORGE_OVERLAY"
ENV_STATS = "TRITONFORGE_OVERLAY_STATS"

_ACTIVE = None
_TLS = threading.local()


def _say(text):
    print(f"tritonforge overlay: {text}", file=sys.stderr, flush=True)


def _exact(value_desc):
    return ("exact", json.dumps(value_desc, sort_keys=True))


def launch_key(args, options, inputs):
    """What tells two launches apart for serving: the parameters passed; for those the tuned
    launcher takes (`inputs`) their signature part (a tensor's dtype, shape, strides and
    alignment, an int's value); for those it binds, their exact value."""
    part = {}
    for name, desc in args.items():
        part[name] = describe.signature_part(desc) if name in inputs else _exact(desc)
    opts = {}
    for name, value in options.items():
        desc = describe.describe_value(value)
        opts[name] = describe.signature_part(desc) if name in inputs else _exact(desc)
    return tuple(sorted(part.items())), tuple(sorted(opts.items()))


def _sha256(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


class _Entry:
    """One kernel the manifest serves."""

    def __init__(self, spec, manifest_dir):
        self.spec = spec
        self.kernel = spec["kernel"]
        self.source = os.path.realpath(spec["source"])
        self.tuned = os.path.join(manifest_dir, spec["tuned"])
        self.inputs = list(spec["inputs"])
        self.through_wrapper = bool(spec.get("through_wrapper"))
        self.keys = {launch_key(c["args"], c.get("options", {}), set(self.inputs)) for c in spec["cases"]}
        self.launcher = None
        self.disabled = None  # why it is not served
        self.checked = False
        self.served = 0
        self.as_written = 0
        self.unmatched = None  # the first launch served as written, described

    def check_source(self):
        if self.checked:
            return self.disabled is None
        self.checked = True
        digest = _sha256(self.source)
        if digest != self.spec.get("source_sha256"):
            self.disabled = "its source file changed since the capture (sha256 differs): runs as the program has it"
            _say(f"{self.source}: {self.kernel}: {self.disabled}")
        return self.disabled is None

    def load(self):
        if self.launcher is not None or self.disabled is not None:
            return self.launcher
        try:
            module = _load_tuned(self.tuned, self.spec.get("package") or "", self.spec.get("search_path") or [])
            self.launcher = getattr(module, self.spec["launcher"])
        except Exception as e:  # the program goes on with its own kernel
            self.disabled = f"the tuned module did not load ({type(e).__name__}: {e}): runs as the program has it"
            _say(f"{self.kernel}: {self.disabled}")
        return self.launcher

    def stats(self):
        return {"kernel": self.kernel, "source": self.source, "served": self.served, "as_written": self.as_written,
                "disabled": self.disabled, "first_unmatched": self.unmatched, "speedup": self.spec.get("speedup")}


def _load_tuned(path, package, search_path):
    """The tuned copy of a module, loaded beside the original: inside its package when it has
    one (the original's relative imports), else as a module of its own; sys.path gains the
    original's folders at its end only when they are missing."""
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"_tritonforge_tuned_{stem}_{hashlib.sha1(path.encode()).hexdigest()[:8]}"
    loaded = sys.modules.get(f"{package}.{name}" if package else name)
    if loaded is not None:
        return loaded
    return modules.load_module_from_path(path, name, search_path, package or None, path_first=False)


class Overlay:
    def __init__(self, manifest_path):
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
        folder = os.path.dirname(os.path.abspath(manifest_path))
        self.entries = {}
        for spec in manifest.get("kernels", []):
            entry = _Entry(spec, folder)
            self.entries[(entry.source, entry.kernel)] = entry
        self.by_object = {}  # id(launched object) -> (object, entry or None)
        self.patched = []
        self.lock = threading.Lock()

    def install(self):
        global _ACTIVE
        if _ACTIVE is not None:
            raise RuntimeError("a tritonforge overlay is already installed in this process")
        from triton.runtime import autotuner, jit
        _ACTIVE = self
        self._patch(jit.JITFunction, "run", False)
        self._patch(autotuner.Autotuner, "run", True)
        self._patch(autotuner.Heuristics, "run", True)
        if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
            from triton.runtime import interpreter
            self._patch(interpreter.InterpretedFunction, "run", False)
        return self

    def _patch(self, cls, name, wrapper):
        original = cls.__dict__[name]
        setattr(cls, name, _serving_run(original, wrapper))
        self.patched.append((cls, name, original))

    def uninstall(self):
        global _ACTIVE
        for cls, name, original in reversed(self.patched):
            setattr(cls, name, original)
        self.patched = []
        if _ACTIVE is self:
            _ACTIVE = None

    def entry_for(self, obj, wrapper):
        known = self.by_object.get(id(obj))
        if known is not None and known[0] is obj:
            return known[1]
        entry = None
        base = describe.innermost_kernel(obj)
        fn = getattr(base, "fn", None)
        code = getattr(fn, "__code__", None)
        if code is not None and not code.co_filename.startswith("<"):
            entry = self.entries.get((os.path.realpath(code.co_filename), fn.__name__))
        # Served where the program launches it: through its autotuner or heuristics when it
        # was captured so, else at the kernel itself.
        if entry is not None and (entry.through_wrapper != wrapper or not entry.check_source()):
            entry = None
        with self.lock:
            self.by_object[id(obj)] = (obj, entry)
        return entry

    def serve(self, entry, obj, args, kwargs):
        """The tuned launch for this call (a function of nothing), or None to run it as written."""
        if entry.disabled:
            entry.as_written += 1
            return None
        names = list(getattr(obj, "arg_names", None) or getattr(describe.innermost_kernel(obj), "arg_names", []))
        if len(args) > len(names):
            return None
        given = dict(zip(names, args))
        options = {}
        for key, value in kwargs.items():
            if key in describe.INTERNAL_KEYWORDS:
                continue
            if key in names:
                given[key] = value
            elif key in describe.LAUNCH_OPTIONS:
                options[key] = value
            else:
                return None
        descs = {n: describe.describe_value(v) for n, v in given.items()}
        key = launch_key(descs, options, set(entry.inputs))
        if key not in entry.keys:
            if entry.unmatched is None:
                entry.unmatched = {n: _short(d) for n, d in descs.items()}
            entry.as_written += 1
            return None
        launcher = entry.load()
        if launcher is None:
            entry.as_written += 1
            return None
        values = {**given, **options}
        try:
            call = [values[n] for n in entry.inputs]
        except KeyError:
            entry.as_written += 1
            return None
        entry.served += 1
        return lambda: launcher(*call)

    def stats(self):
        return [e.stats() for e in self.entries.values()]

    def report(self):
        for s in self.stats():
            if s["served"] or s["as_written"] or s["disabled"]:
                line = f"{s['kernel']}: {s['served']} launch(es) tuned, {s['as_written']} as written"
                if s["as_written"] and s["first_unmatched"]:
                    line += " (not a captured launch: " + ", ".join(f"{k}={v}" for k, v in
                                                                    list(s["first_unmatched"].items())[:6]) + ")"
                if s["disabled"]:
                    line += f"; {s['disabled']}"
                _say(line)
        folder = os.environ.get(ENV_STATS)
        if folder:
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, f"{os.getpid()}.json")
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                json.dump({"pid": os.getpid(), "kernels": self.stats()}, f, indent=1)
            os.replace(path + ".tmp", path)


def _short(desc):
    if desc["kind"] == "tensor":
        return f"{desc['dtype']}{list(desc['shape'])}"
    return repr(desc.get("value", desc["kind"]))


def _as_written(original, self, args, kwargs):
    """The call as the program made it. While a tuned launch runs (`_TLS.collect` is a list), what
    each such call returns is kept: the outermost finishes last, and its value (the compiled
    kernel Triton returns) is what the served launch returns to the program."""
    result = original(self, *args, **kwargs)
    collect = getattr(_TLS, "collect", None)
    if collect is not None:
        collect.append(result)
    return result


def _serving_run(original, wrapper):
    def run(self, *args, **kwargs):
        ov = _ACTIVE
        if ov is None or kwargs.get("warmup"):
            return _as_written(original, self, args, kwargs)
        entry = ov.entry_for(self, wrapper)
        passing = getattr(_TLS, "passing", None)
        if passing is None:
            passing = _TLS.passing = set()
        if entry is None or id(entry) in passing:
            return _as_written(original, self, args, kwargs)
        launch = None
        try:
            launch = ov.serve(entry, self, args, kwargs)
        except Exception as e:  # never break the program: it launches as written
            entry.disabled = f"matching failed ({type(e).__name__}: {e})"
        if launch is not None:
            outer = getattr(_TLS, "collect", None)
            _TLS.collect = []
            try:
                launch()
                returned = _TLS.collect
            finally:
                _TLS.collect = outer
            result = returned[-1] if returned else None
            if outer is not None:
                outer.append(result)
            return result
        passing.add(id(entry))
        try:
            return _as_written(original, self, args, kwargs)
        finally:
            passing.discard(id(entry))
    run.__wrapped__ = original
    return run


@contextlib.contextmanager
def overlay(manifest_path):
    """Serves the tuned kernels of `manifest_path` (DIR/overlay/overlay.json) inside the block."""
    ov = Overlay(manifest_path).install()
    try:
        yield ov
    finally:
        ov.uninstall()


def start_from_environment():
    """Installs the overlay of $TRITONFORGE_OVERLAY; called once triton is imported."""
    path = os.environ.get(ENV_MANIFEST)
    if not path:
        return None
    ov = Overlay(path).install()
    atexit.register(ov.report)
    return ov

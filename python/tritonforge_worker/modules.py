"""Loading user sources (kernels, launchers, harnesses) as modules, and finding kernels in them."""

import hashlib
import importlib.util
import os
import sys
import types


def load_module_from_path(path, module_name=None, search_path=None, package=None, path_first=True):
    """Loads the file at `path` as a module. With `package` (the dotted package the original
    source belongs to), the module is loaded inside that package, so that its relative imports
    (`from .utils import x`) find the package's other modules; the package's root folder must
    be on `search_path`. The file's folder and `search_path` go first on sys.path; with
    path_first=False (inside a user's program) only `search_path`'s missing folders, at its end."""
    path = os.path.abspath(path)
    if module_name is None:
        module_name = "tf_mod_" + hashlib.sha1(path.encode()).hexdigest()[:12]
    for extra in ([os.path.dirname(path)] if path_first else []) + list(search_path or []):
        if extra and extra not in sys.path:
            if path_first:
                sys.path.insert(0, extra)
            else:
                sys.path.append(extra)
    if package:
        importlib.import_module(package)
        module_name = f"{package}.{module_name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    if package:
        module.__package__ = package
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def resolve_attr(module, dotted):
    """`Function.apply` in `module`: the attribute chain, or None."""
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def unwrap_jit(obj):
    """Autotuner / Heuristics wrap a JITFunction in `.fn`; returns the JITFunction or None."""
    from triton.runtime.jit import JITFunction
    seen = 0
    while obj is not None and not isinstance(obj, JITFunction) and seen < 8:
        obj = getattr(obj, "fn", None)
        seen += 1
    return obj if isinstance(obj, JITFunction) else None


def find_jit_function(module, name):
    obj = getattr(module, name, None)
    if obj is None:
        raise LookupError(f"no kernel named '{name}' in {getattr(module, '__file__', module.__name__)}")
    fn = unwrap_jit(obj)
    if fn is None:
        raise LookupError(f"'{name}' is not a @triton.jit function")
    return fn


class _Anything:
    """Stands in for torch when it is missing, so that a kernel file that imports torch can
    still be compiled ahead of time on a machine without torch. Any attribute or call gives
    another stand-in; nothing computes."""

    def __init__(self, name="torch"):
        self._name = name

    def __getattr__(self, item):
        if item.startswith("__") and item.endswith("__"):
            raise AttributeError(item)
        return _Anything(f"{self._name}.{item}")

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # used as a decorator
        return _Anything(f"{self._name}()")

    def __repr__(self):
        return f"<stand-in {self._name}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def stub_torch_if_missing():
    """Installs a stand-in `torch` module when the real one cannot be imported. Returns True
    when it did (the caller reports it)."""
    if "torch" in sys.modules and not isinstance(sys.modules["torch"], _StubModule):
        return False
    if isinstance(sys.modules.get("torch"), _StubModule):
        return True
    try:
        import torch  # noqa: F401
        return False
    except Exception:
        sys.modules["torch"] = _StubModule("torch")
        return True


class _StubModule(types.ModuleType):
    def __getattr__(self, item):
        if item.startswith("__") and item.endswith("__"):
            raise AttributeError(item)
        return _Anything(f"torch.{item}")


def autotuners(roots, module=None, skip=None):
    """The @triton.autotune objects defined in `module` and in the modules loaded from under
    `roots` (except `skip`), each once: Heuristics and Autotuner wrap each other via `.fn`."""
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:  # an older Triton without the class: none
        return []
    roots = [os.path.abspath(r) + os.sep for r in roots if r]
    mods = [module] if module is not None else []
    for mod in list(sys.modules.values()):
        path = getattr(mod, "__file__", None)
        if mod is None or mod is module or mod is skip or not path:
            continue
        if any(os.path.abspath(path).startswith(r) for r in roots):
            mods.append(mod)
    found, seen = [], set()
    for mod in mods:
        for value in list(vars(mod).values()):
            depth = 0
            while value is not None and depth < 4:
                if isinstance(value, Autotuner) and id(value) not in seen:
                    seen.add(id(value))
                    found.append(value)
                value = getattr(value, "fn", None)
                depth += 1
    return found


def reset_shared_autotuners(roots, keep=None):
    """Clears the configuration cache of every @triton.autotune kernel defined in a module
    loaded from under `roots` (the task's package roots, the variant's folder), except in the
    module `keep`. Variants of a launcher that import one autotuned kernel from a sibling
    module share its cache in a process: without this, a variant that changes the layout of
    the kernel's operands is timed with the configuration tuned for the previous variant's
    layout, not the one its own first call would tune, which is what a user of it gets."""
    cleared = 0
    for at in autotuners(roots, skip=keep):
        if getattr(at, "cache", None):
            at.cache.clear()
            cleared += 1
    return cleared

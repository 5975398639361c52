"""A task built in Python, written out as the files the binary reads (docs/task-format.md).

    task = tritonforge.Task(name="softmax", source="softmax.py", launcher="softmax",
                            make_inputs=make_inputs, reference=reference,
                            cases=[{"M": 4096, "N": 4096}], rtol=1e-4, atol=1e-6)
    task.write("some/folder")   # -> some/folder/task.toml and some/folder/softmax_harness.py

The harness functions are written into the harness file as their source text (the binary
reads `make_inputs` statically to learn shapes, and the worker imports the file in its own
process), together with what they use from their module: imported modules and names become
import lines, plain constants (numbers, strings, tuples of them, torch dtypes) become
assignments, and other functions of a notebook or script are copied the same way. What cannot
be written so (a lambda, a closure, a tensor held in a global) is refused with BadInputError
naming the function and the name; pass `harness=PATH` to use a harness file instead.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import inspect
import math
import os
import re
import sys
import sysconfig
import textwrap
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import BadInputError

# The harness functions a task may give, in the order they are written.
HARNESS_FUNCTIONS = ("make_inputs", "reference", "flops", "bytes", "grad_inputs", "grad_outputs",
                     "reference_backward")

_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclasses.dataclass
class Task:
    """What to optimize and how to check it: the keys of a task file (docs/task-format.md),
    with the harness as Python functions (or `harness`, the path of a harness file)."""

    name: str
    source: str | os.PathLike | types.ModuleType
    launcher: str | Callable
    cases: Sequence[Mapping[str, Any]]
    make_inputs: Callable | None = None
    reference: Callable | None = None
    rtol: float | None = None
    atol: float | None = None
    seeds: int | None = None
    reference_precision: str | None = None
    in_place: Sequence[int] | None = None
    kernels: Sequence[str] | None = None
    direction: str | None = None
    signature: Mapping[str, Mapping[str, Any]] | None = None
    flops: Callable | None = None
    bytes: Callable | None = None
    grad_inputs: Callable | None = None
    grad_outputs: Callable | None = None
    reference_backward: Callable | None = None
    harness: str | os.PathLike | None = None

    def source_path(self) -> Path:
        src = self.source
        if isinstance(src, types.ModuleType):
            if not getattr(src, "__file__", None):
                raise BadInputError(f"task '{self.name}': source module {src.__name__} has no file")
            src = src.__file__
        if not isinstance(src, (str, os.PathLike)):
            raise BadInputError(f"task '{self.name}': source must be a path or a module, not {type(src).__name__}")
        path = Path(src).expanduser().resolve()
        if not path.is_file():
            raise BadInputError(f"task '{self.name}': source {path} is not a file")
        return path

    def launcher_name(self) -> str:
        if isinstance(self.launcher, str):
            return self.launcher
        name = getattr(self.launcher, "__name__", None)
        if not name or name == "<lambda>":
            raise BadInputError(f"task '{self.name}': launcher must be a function of the source or its name")
        return name

    def harness_functions(self) -> dict[str, Callable]:
        return {role: getattr(self, role) for role in HARNESS_FUNCTIONS if getattr(self, role) is not None}

    def _check(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise BadInputError(f"task name {self.name!r} must be a non-empty string of [A-Za-z0-9_.-]")
        if isinstance(self.cases, (str, bytes, Mapping)) or not isinstance(self.cases, Sequence) or not self.cases:
            raise BadInputError(f"task '{self.name}': cases must be a non-empty list of dicts")
        for i, case in enumerate(self.cases):
            if not isinstance(case, Mapping):
                raise BadInputError(f"task '{self.name}': cases[{i}] must be a dict, not {type(case).__name__}")
        functions = self.harness_functions()
        if self.harness is not None:
            if functions:
                raise BadInputError(f"task '{self.name}': give either harness=PATH or the harness functions "
                                    f"({', '.join(functions)}), not both")
            return
        for role in ("make_inputs", "reference"):
            if role not in functions:
                raise BadInputError(f"task '{self.name}': {role} is missing (or pass harness=PATH)")
        for role, fn in functions.items():
            if not callable(fn):
                raise BadInputError(f"task '{self.name}': {role} must be a function, not {type(fn).__name__}")

    def toml(self, harness_path: str | os.PathLike) -> str:
        """The task file's text, with `harness_path` as its harness."""
        top: dict[str, Any] = {"name": self.name, "source": str(self.source_path()), "launcher": self.launcher_name(),
                               "harness": str(harness_path)}
        if self.kernels is not None:
            top["kernels"] = list(self.kernels)
        if self.direction is not None:
            top["direction"] = self.direction
        top["cases"] = [dict(c) for c in self.cases]
        check = {k: v for k, v in (("rtol", self.rtol), ("atol", self.atol), ("seeds", self.seeds),
                                   ("reference_precision", self.reference_precision),
                                   ("in_place", None if self.in_place is None else list(self.in_place)))
                 if v is not None}
        lines = [f"# Written by tritonforge.Task (the Python API) for task '{self.name}'."]
        lines += [f"{_toml_key(k)} = {_toml_value(v, k)}" for k, v in top.items()]
        if check:
            lines += ["", "[check]"] + [f"{_toml_key(k)} = {_toml_value(v, 'check.' + k)}" for k, v in check.items()]
        for kernel, params in (self.signature or {}).items():
            if not isinstance(params, Mapping):
                raise BadInputError(f"task '{self.name}': signature['{kernel}'] must be a dict of parameter types")
            lines += ["", f"[signature.{_toml_key(str(kernel))}]"]
            lines += [f"{_toml_key(str(p))} = {_toml_value(v, f'signature.{kernel}.{p}')}" for p, v in params.items()]
        return "\n".join(lines) + "\n"

    def harness_source(self) -> str:
        """The harness module's text: the harness functions and what they use."""
        self._check()
        if self.harness is not None:
            raise BadInputError(f"task '{self.name}': the harness is the file {self.harness}, not functions")
        return write_harness(self.harness_functions(), self.name)

    def write(self, directory: str | os.PathLike) -> Path:
        """Writes task.toml (and NAME_harness.py unless `harness` is a file) into `directory`,
        which is created when missing; returns the task file's path."""
        self._check()
        folder = Path(directory).expanduser().resolve()
        # Everything is worked out before anything is written: bad input leaves no file.
        if self.harness is not None:
            harness = Path(self.harness).expanduser().resolve()
            if not harness.is_file():
                raise BadInputError(f"task '{self.name}': harness {harness} is not a file")
            harness_text = None
        else:
            harness = folder / f"{self.name.replace('.', '_').replace('-', '_')}_harness.py"
            harness_text = self.harness_source()
        task_text = self.toml(harness)
        folder.mkdir(parents=True, exist_ok=True)
        if harness_text is not None:
            harness.write_text(harness_text, encoding="utf-8")
        task_file = folder / "task.toml"
        task_file.write_text(task_text, encoding="utf-8")
        return task_file


# --------------------------------------------------------------------------------------------
# TOML values: what a task file holds (strings, integers, finite floats, booleans, arrays,
# inline tables). A value of another type is bad input naming its key.

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_string(key)


def _toml_string(s: str) -> str:
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_value(v: Any, where: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"  # the binary refuses it, naming the key
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, (str, os.PathLike)):
        return _toml_string(os.fspath(v))
    if isinstance(v, Mapping):
        items = [f"{_toml_key(str(k))} = {_toml_value(x, f'{where}.{k}')}" for k, x in v.items()]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x, f"{where}[{i}]") for i, x in enumerate(v)) + "]"
    type_name = type(v).__name__
    if hasattr(v, "item") and callable(v.item):  # a NumPy or torch scalar
        try:
            return _toml_value(v.item(), where)
        except (TypeError, ValueError):
            pass
    raise BadInputError(f"task value '{where}' must be a number, string, boolean, list or dict, not {type_name}")


# --------------------------------------------------------------------------------------------
# Harness functions -> module text.

def _refuse(owner: str, why: str) -> BadInputError:
    return BadInputError(f"{owner}: {why}; define the harness in a file and pass harness=PATH")


def _is_plain_constant(v: Any, depth: int = 0) -> bool:
    if depth > 8:
        return False
    if v is None or isinstance(v, (bool, int, str, bytes)):
        return True
    if isinstance(v, float):
        return True
    if isinstance(v, (tuple, list, set, frozenset)):
        return all(_is_plain_constant(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return all(_is_plain_constant(k, depth + 1) and _is_plain_constant(x, depth + 1) for k, x in v.items())
    return False


def _constant_text(v: Any) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return f'float("{v}")'
    if isinstance(v, (tuple, list)):
        inner = ", ".join(_constant_text(x) for x in v)
        if isinstance(v, tuple):
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        return f"[{inner}]"
    if isinstance(v, (set, frozenset)):
        inner = ", ".join(sorted(_constant_text(x) for x in v))
        body = f"{{{inner}}}" if inner else "()"
        return f"frozenset({body})" if isinstance(v, frozenset) or not inner else body
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_constant_text(k)}: {_constant_text(x)}" for k, x in v.items()) + "}"
    return repr(v)


def _is_torch_value(v: Any, type_name: str) -> bool:
    t = type(v)
    return t.__module__ == "torch" and t.__name__ == type_name


def _outside_site_packages(path: str) -> bool:
    """A file that the worker's interpreter will not find on its own import path."""
    real = os.path.realpath(path)
    roots = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    if any(r and (real == os.path.realpath(r) or real.startswith(os.path.realpath(r) + os.sep)) for r in roots):
        return False
    return "site-packages" not in real.split(os.sep) and "dist-packages" not in real.split(os.sep)


class _HarnessWriter:
    """Collects the functions and what they use from their globals, in the order they must
    be written: import lines, constants, then the functions (whose bodies run only later)."""

    def __init__(self) -> None:
        self.bound: dict[str, Any] = {}      # name -> the object it stands for
        self.imports: list[str] = []
        self.constants: list[str] = []
        self.functions: list[str] = []
        self.paths: list[str] = []            # folders of the user's own modules

    def bind(self, name: str, value: Any, owner: str) -> bool:
        """Records that `name` stands for `value`; False when it already did."""
        if name in self.bound:
            if self.bound[name] is value or (_is_plain_constant(value) and self.bound[name] == value):
                return False
            raise _refuse(owner, f"the name '{name}' stands for two different things among the harness functions")
        self.bound[name] = value
        return True

    def add_path_of(self, module: types.ModuleType) -> None:
        top = sys.modules.get(module.__name__.split(".")[0], module)
        file = getattr(top, "__file__", None)
        if not file:
            return
        folder = os.path.dirname(os.path.abspath(file))
        if getattr(top, "__path__", None):  # a package: its parent folder holds it
            folder = os.path.dirname(folder)
        if _outside_site_packages(file) and folder not in self.paths:
            self.paths.append(folder)

    def add_global(self, name: str, value: Any, owner: str) -> None:
        if isinstance(value, types.ModuleType):
            if self.bind(name, value, owner):
                mod = value.__name__
                self.imports.append(f"import {mod}" if name == mod else f"import {mod} as {name}")
                self.add_path_of(value)
            return
        if _is_plain_constant(value):
            if self.bind(name, value, owner):
                self.constants.append(f"{name} = {_constant_text(value)}")
            return
        if _is_torch_value(value, "dtype"):
            if self.bind(name, value, owner):
                self.add_global("torch", sys.modules["torch"], owner)
                self.constants.append(f"{name} = {value}")  # str(torch.float16) == "torch.float16"
            return
        if _is_torch_value(value, "device"):
            if self.bind(name, value, owner):
                self.add_global("torch", sys.modules["torch"], owner)
                self.constants.append(f"{name} = torch.device({str(value)!r})")
            return
        module_name = getattr(value, "__module__", None)
        qualname = getattr(value, "__qualname__", None)
        if callable(value) and module_name and module_name != "__main__" and qualname and "." not in qualname \
                and "<" not in qualname:
            try:
                module = importlib.import_module(module_name)
            except Exception:  # noqa: BLE001 - any failure means it cannot be imported by name
                module = None
            if module is not None and getattr(module, qualname, None) is value:
                if self.bind(name, value, owner):
                    alias = "" if name == qualname else f" as {name}"
                    self.imports.append(f"from {module_name} import {qualname}{alias}")
                    self.add_path_of(module)
                return
        if isinstance(value, types.FunctionType):
            self.add_function(value, name, owner)
            return
        raise _refuse(owner, f"it uses the global '{name}' (a {type(value).__name__}), which cannot be written into a "
                             "harness file: compute it inside the function")

    def add_function(self, fn: Callable, as_name: str, owner: str | None = None) -> None:
        label = owner or as_name
        if not isinstance(fn, types.FunctionType):
            raise _refuse(label, f"{as_name} must be a plain Python function, not {type(fn).__name__}")
        if fn.__name__ == "<lambda>":
            raise _refuse(label, f"{as_name} is a lambda, whose source cannot be written on its own")
        if fn.__closure__:
            free = ", ".join(fn.__code__.co_freevars)
            raise _refuse(label, f"{as_name} is a closure over {free}, which a harness file cannot hold")
        if not self.bind(as_name, fn, label):
            return
        try:
            source = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError) as e:
            raise _refuse(label, f"the source of {as_name} is not available ({e})") from None
        try:
            tree = ast.parse(source)
        except SyntaxError as e:
            raise _refuse(label, f"the source of {as_name} does not parse on its own ({e.msg})") from None
        node = tree.body[0] if tree.body else None
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != fn.__name__:
            raise _refuse(label, f"the source of {as_name} is not one function definition")
        if as_name != fn.__name__:
            source = _rename_def(source, node, as_name)
        # The global names it reads: when it runs, the bare names of its text that its code loads
        # by name (co_names, which also holds attribute names) and that are no local of it or of
        # a function or comprehension inside it; when it is defined, the names in its decorators
        # and default values. Annotations are never evaluated (the file starts with
        # `from __future__ import annotations`).
        code_names, code_locals = _code_names(fn.__code__)
        at_call = _loaded_names(node.body) & code_names - code_locals
        defaults = [d for d in node.args.defaults + node.args.kw_defaults if d is not None]
        at_def = _loaded_names(node.decorator_list + defaults)
        for name in sorted((at_call | at_def) - {fn.__name__, as_name}):
            if name in fn.__globals__:
                self.add_global(name, fn.__globals__[name], f"{label} ({fn.__qualname__})")
            elif not hasattr(builtins, name):
                raise _refuse(label, f"{fn.__qualname__} reads the name '{name}', which its module does not define")
        self.functions.append(source.rstrip() + "\n")

    def text(self, task_name: str) -> str:
        parts = [f'"""Harness of task \'{task_name}\', written by tritonforge.Task from Python functions."""\n\n'
                 "from __future__ import annotations\n"]
        if self.paths:
            parts.append("import sys\n\n# The folders of the user's own modules that these functions import.\n"
                         + "".join(f"if {p!r} not in sys.path:\n    sys.path.append({p!r})\n" for p in self.paths))
        if self.imports:
            parts.append("\n".join(self.imports) + "\n")
        if self.constants:
            parts.append("\n".join(self.constants) + "\n")
        parts += self.functions
        return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"


def _code_names(code: types.CodeType) -> tuple[set[str], set[str]]:
    """(names loaded by name or attribute, local names) of a code object and those inside it."""
    names, local = set(code.co_names), set(code.co_varnames) | set(code.co_cellvars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            n, loc = _code_names(const)
            names |= n
            local |= loc
    return names, local


def _loaded_names(nodes: Sequence[ast.AST]) -> set[str]:
    return {n.id for root in nodes for n in ast.walk(root) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _rename_def(source: str, node: ast.AST, new_name: str) -> str:
    lines = source.splitlines(keepends=True)
    i = node.lineno - 1
    lines[i] = re.sub(rf"\bdef\s+{re.escape(node.name)}\b", f"def {new_name}", lines[i], count=1)
    return "".join(lines)


def write_harness(functions: Mapping[str, Callable], task_name: str = "task") -> str:
    """The text of a harness module defining each of `functions` (role -> function) under its
    role's name, with what they use from their modules."""
    writer = _HarnessWriter()
    for role in HARNESS_FUNCTIONS:
        if role in functions:
            writer.add_function(functions[role], role, f"task '{task_name}': {role}")
    unknown = sorted(set(functions) - set(HARNESS_FUNCTIONS))
    if unknown:
        raise BadInputError(f"task '{task_name}': unknown harness function(s) {', '.join(unknown)} "
                            f"(known: {', '.join(HARNESS_FUNCTIONS)})")
    return writer.text(task_name)

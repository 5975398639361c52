"""The `guard` op: a static check of a rewritten module (kernels + launcher) that an engine
proposes, before it is compiled or measured. A rewrite may change how the kernels compute,
never what the launcher is for: it keeps the launcher's name and parameters, still launches
a @triton.jit kernel of its own, and computes nothing with torch (the reference could be
called that way, and verification would pass). Refused, with a reason each:

  - the launcher missing, renamed, or with other parameters than the original's;
  - no `kernel[grid](...)` launch of a @triton.jit function of the module in the launcher;
  - torch computing outputs: torch.*/F.* calls outside allocation, shape and dtype helpers,
    tensor methods that compute (.sum(), .mm(), .softmax(), ...), `@`, and arithmetic,
    comparisons or indexed writes on tensors outside kernels (x + y, out += x, out[:] = x);
  - state kept across calls: `global` / `nonlocal` statements, module-level mutable
    containers, functools caches, attributes set on functions or modules;
  - the reference or the harness: imports of the harness or of anything not triton/torch/
    math/typing..., the name `reference`, `make_inputs`;
  - files, network, processes, dynamic code: open, os, sys, pathlib, subprocess, socket,
    importlib, eval, exec, compile, __import__, getattr/setattr on strings.

The check is an allow list of calls where it can be (torch), and a deny list elsewhere: a
guard that says no to something harmless costs one proposal; one that says yes to a cheat
costs the result's meaning.
"""

import ast

# torch functions that allocate, describe or reshape, never compute values from inputs.
TORCH_ALLOWED = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like",
    "full", "full_like", "arange", "tensor", "device", "dtype", "Size", "finfo", "iinfo",
    "is_tensor", "is_floating_point", "get_default_dtype", "result_type", "promote_types",
    "cuda", "float16", "float32", "bfloat16", "float64", "int8", "int16", "int32", "int64",
    "uint8", "bool", "float8_e4m3fn", "float8_e5m2", "half", "float", "double", "long",
    "int", "Tensor", "no_grad", "inference_mode",
}
# torch.cuda helpers a launcher may use.
TORCH_CUDA_ALLOWED = {"current_device", "get_device_properties", "device", "current_stream",
                      "is_available", "device_count"}
# Tensor methods that allocate, describe or give a view (no arithmetic on the values).
TENSOR_METHODS_ALLOWED = {
    "size", "stride", "numel", "dim", "ndimension", "element_size", "data_ptr", "view",
    "reshape", "contiguous", "is_contiguous", "new_empty", "new_zeros", "new_ones", "new_full",
    "unsqueeze", "squeeze", "flatten", "unflatten", "expand", "permute", "transpose", "t",
    "as_strided", "storage_offset", "get_device", "is_cuda", "type", "item", "tolist",
    "chunk", "split", "narrow", "select", "unbind", "view_as", "expand_as", "__len__",
    # Python containers and strings that launchers use.
    "append", "extend", "items", "keys", "values", "get", "format", "join", "index",
    "startswith", "endswith", "lower", "upper", "replace", "bit_length",
}
# Tensor methods that compute from the values: the guard names them in its reason.
TENSOR_METHODS_COMPUTING = {
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "cumsum",
    "cumprod", "mm", "bmm", "matmul", "mv", "dot", "softmax", "log_softmax", "exp", "log",
    "sqrt", "rsqrt", "pow", "abs", "neg", "add", "sub", "mul", "div", "add_", "sub_", "mul_",
    "div_", "copy_", "fill_", "zero_", "clamp", "clamp_", "relu", "sigmoid", "tanh", "norm",
    "var", "std", "sort", "topk", "where", "masked_fill", "masked_fill_", "index_select",
    "gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "float", "half", "to",
    "double", "bfloat16", "int", "long", "clone", "sign", "erf", "gelu", "silu", "layer_norm",
    "addmm", "baddbmm", "einsum", "outer", "cross", "triu", "tril", "flip", "roll", "repeat",
    "cat", "stack", "all", "any", "eq", "ne", "lt", "gt", "le", "ge", "logsumexp", "cpu",
    "numpy", "detach", "backward",
}
# Modules a rewrite may import.
IMPORTS_ALLOWED = {"torch", "triton", "math", "typing", "dataclasses",
                   "__future__", "numbers", "enum"}
# Names whose use alone is refused.
NAMES_REFUSED = {
    "open": "touches files (open)",
    "eval": "runs dynamic code (eval)",
    "exec": "runs dynamic code (exec)",
    "compile": "runs dynamic code (compile)",
    "__import__": "imports dynamically (__import__)",
    "globals": "reaches module state (globals)",
    "locals": "reaches frame state (locals)",
    "vars": "reaches module state (vars)",
    "setattr": "sets attributes dynamically (setattr)",
    "getattr": "reads attributes dynamically (getattr)",
    "delattr": "deletes attributes dynamically (delattr)",
    "input": "reads stdin (input)",
    "breakpoint": "enters a debugger (breakpoint)",
    "reference": "reads the harness's reference",
    "make_inputs": "reads the harness's inputs",
    "__builtins__": "reaches the builtins",
}
MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter", "bytearray"}


def _dotted(node):
    """`a.b.c` -> "a.b.c"; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _is_jit(fn):
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = _dotted(target) or ""
        if name.split(".")[-1] in ("jit", "autotune", "heuristics"):
            return True
    return False


def _params(fn):
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    names += [p.arg for p in a.kwonlyargs]
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return names


def _functions(tree):
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


class _Walker(ast.NodeVisitor):
    def __init__(self, aliases, jit_names):
        self.reasons = []
        self.aliases = aliases          # local name -> module it stands for ("F" -> "torch.nn.functional")
        self.jit_names = jit_names
        self.in_jit = False

    def refuse(self, node, why):
        line = getattr(node, "lineno", 0)
        text = f"line {line}: {why}"
        if text not in self.reasons:
            self.reasons.append(text)

    def visit_FunctionDef(self, node):
        for d in node.decorator_list:
            name = _dotted(d.func if isinstance(d, ast.Call) else d) or ""
            if name.split(".")[-1] in ("cache", "lru_cache", "cached_property"):
                self.refuse(node, f"keeps state across calls (@{name} on {node.name})")
        was = self.in_jit
        self.in_jit = _is_jit(node)
        self.generic_visit(node)
        self.in_jit = was

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Global(self, node):
        self.refuse(node, f"keeps state across calls (global {', '.join(node.names)})")

    def visit_Nonlocal(self, node):
        self.refuse(node, f"keeps state across calls (nonlocal {', '.join(node.names)})")

    def _check_import(self, node, module):
        root = module.split(".")[0]
        if root not in IMPORTS_ALLOWED:
            self.refuse(node, f"imports '{module}' (only torch, triton and math-like modules may be imported)")

    def visit_Import(self, node):
        for a in node.names:
            self._check_import(node, a.name)

    def visit_ImportFrom(self, node):
        if node.level:
            self.refuse(node, "imports from its package (the harness could be read that way)")
            return
        self._check_import(node, node.module or "")
        if node.module == "functools":
            self.refuse(node, "imports functools (caches keep state across calls)")

    def visit_Name(self, node):
        if node.id in NAMES_REFUSED:
            self.refuse(node, NAMES_REFUSED[node.id])

    def visit_Attribute(self, node):
        name = _dotted(node)
        if name:
            root = name.split(".")[0]
            full = self.aliases.get(root, root) + name[len(root):]
            if full.startswith(("os.", "sys.", "pathlib.", "subprocess.", "socket.", "importlib.", "builtins.")):
                self.refuse(node, f"touches files, processes or the interpreter ({name})")
        if node.attr in ("__dict__", "__globals__", "__code__", "__closure__", "__class__", "__subclasses__"):
            self.refuse(node, f"reaches interpreter internals ({node.attr})")
        self.generic_visit(node)

    def visit_Assign(self, node):
        for t in node.targets:
            if isinstance(t, ast.Attribute) and _dotted(t.value) in self.jit_names | set(self.aliases):
                self.refuse(node, f"sets an attribute of a function or module ({_dotted(t)})")
        self.generic_visit(node)

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.MatMult) and not self.in_jit:
            self.refuse(node, "computes with torch (the @ operator)")
        self.generic_visit(node)

    def visit_Call(self, node):
        if not self.in_jit:
            self._check_call(node)
        self.generic_visit(node)

    def _check_call(self, node):
        func = node.func
        name = _dotted(func)
        if name:
            root = name.split(".")[0]
            full = self.aliases.get(root, root) + name[len(root):]
            if full.startswith("torch.cuda."):
                if full.split(".")[2] not in TORCH_CUDA_ALLOWED:
                    self.refuse(node, f"computes with torch ({name})")
                return
            if full.startswith("torch.nn") or full.startswith("torch.linalg") or full.startswith("torch.fft") \
                    or full.startswith("torch.special") or full.startswith("torch.ops") \
                    or full.startswith("torch._"):
                self.refuse(node, f"computes with torch ({name})")
                return
            if full.startswith("torch."):
                if full.split(".")[1] not in TORCH_ALLOWED:
                    self.refuse(node, f"computes with torch ({name})")
                return
            if root in self.aliases or root in ("triton", "math", "tl"):
                return
        if isinstance(func, ast.Attribute):
            method = func.attr
            if method in TENSOR_METHODS_COMPUTING:
                self.refuse(node, f"computes with a tensor method (.{method}())")
            elif method not in TENSOR_METHODS_ALLOWED and not (name and name.split(".")[0] in self.aliases):
                # A method on an object the guard cannot type: named, so that the model can
                # ask for it to be allowed, but refused (it may compute).
                self.refuse(node, f"calls .{method}(), which the guard cannot tell from a computation")


def _aliases(tree):
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[(a.asname or a.name).split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _module_state(tree):
    """Module-level assignments of mutable containers: a cache across calls."""
    reasons = []
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        value = node.value
        mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp))
        if isinstance(value, ast.Call):
            callee = (_dotted(value.func) or "").split(".")[-1]
            mutable = callee in MUTABLE_CALLS
        if mutable:
            reasons.append(f"line {node.lineno}: keeps state across calls (a module-level mutable container)")
    return reasons


# Attributes that only a tensor has: a launcher parameter read this way is a tensor.
TENSOR_ATTRS = {"shape", "stride", "numel", "dtype", "device", "is_contiguous", "contiguous", "view",
                "reshape", "data_ptr", "element_size", "ndim", "dim", "size", "is_cuda", "T", "mT"}


# Calls whose result is a tensor (not a size or a dtype).
TENSOR_MAKERS = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
                 "full_like", "arange", "tensor"}
TENSOR_VIEWS = {"view", "reshape", "contiguous", "t", "transpose", "permute", "expand", "unsqueeze", "squeeze",
                "flatten", "unflatten", "as_strided", "narrow", "select", "view_as", "expand_as", "new_empty",
                "new_zeros", "new_ones", "new_full"}


def _tensor_arithmetic(fn, aliases):
    """Arithmetic, comparisons and indexed writes on tensors in a plain (not jit) function:
    `x + y`, `out += x`, `-x`, `out[:] = x`, `x > 0` compute outputs with torch as surely as
    torch.add does. Tensors: parameters used as tensors (x.shape, x.stride(), ...), and names
    assigned from torch calls or from a tensor's methods."""
    tensors = set()
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in TENSOR_ATTRS \
                and node.value.id in params:
            tensors.add(node.value.id)
    for _ in range(3):  # names assigned from tensors or torch, to a fixed point (short chains)
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            func = node.value.func
            callee = _dotted(func) or ""
            root = callee.split(".")[0]
            full = aliases.get(root, root) + callee[len(root):]
            from_torch = full.startswith("torch.") and full.split(".")[-1] in TENSOR_MAKERS
            from_tensor = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in tensors and func.attr in TENSOR_VIEWS
            if from_torch or from_tensor:
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        tensors.add(t.id)

    def is_tensor(node):
        if isinstance(node, ast.Subscript):
            node = node.value
        return isinstance(node, ast.Name) and node.id in tensors

    out = []
    for node in ast.walk(fn):
        operands = []
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
        elif isinstance(node, ast.AugAssign):
            operands = [node.target, node.value]
        elif isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
            operands = [node.operand]
        elif isinstance(node, ast.Compare):
            operands = [node.left] + list(node.comparators)
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Subscript) and is_tensor(t) for t in node.targets):
                out.append(f"line {node.lineno}: writes into a tensor outside a kernel (an indexed assignment)")
            continue
        if any(is_tensor(o) for o in operands):
            names = ", ".join(sorted({(o.value if isinstance(o, ast.Subscript) else o).id for o in operands if is_tensor(o)}))
            out.append(f"line {node.lineno}: computes with torch (arithmetic on the tensor {names} outside a kernel)")
    return out


def _launches(fn, jit_names):
    """The @triton.jit kernels of the module `fn` launches as kernel[grid](...)."""
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            name = _dotted(node.func.value)
            if name in jit_names:
                out.add(name)
    return out


def check_rewrite(source, original, launcher):
    """The reasons `source` is refused as a rewrite of `original` (empty: accepted)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"line {exc.lineno}: not valid Python ({exc.msg})"]
    reasons = []
    old = _functions(ast.parse(original)) if original else {}
    new = _functions(tree)
    fn = new.get(launcher)
    if fn is None:
        reasons.append(f"the launcher '{launcher}' is missing (a rewrite keeps its name)")
    elif launcher in old and _params(old[launcher]) != _params(fn):
        reasons.append(f"the launcher '{launcher}' takes ({', '.join(_params(fn))}) instead of "
                       f"({', '.join(_params(old[launcher]))})")
    jit_names = {name for name, f in new.items() if _is_jit(f)}
    if fn is not None:
        called = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        # The launcher itself, or a helper of the module it calls, launches a kernel.
        helpers = [new[c] for c in called if c in new and c not in jit_names]
        launched = _launches(fn, jit_names)
        for h in helpers:
            launched |= _launches(h, jit_names)
        if not launched:
            reasons.append(f"the launcher '{launcher}' launches no @triton.jit kernel of the module")
    reasons += _module_state(tree)
    for f in new.values():
        if not _is_jit(f):
            reasons += _tensor_arithmetic(f, _aliases(tree))
    walker = _Walker(_aliases(tree), jit_names)
    walker.visit(tree)
    reasons += walker.reasons
    return reasons


def op_guard(args):
    reasons = check_rewrite(args["source"], args.get("original", ""), args["launcher"])
    return {"ok": not reasons, "reasons": reasons}

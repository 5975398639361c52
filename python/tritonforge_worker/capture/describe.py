"""What one kernel launch is made of, in plain JSON: its arguments (tensors by dtype, shape,
strides, storage offset and device; scalars by value), its launch options, and the key that
tells two launches of one kernel apart ("shape signature").

Nothing here touches the GPU: descriptors read tensor metadata only. Shared by the recorder
and the overlay.
"""

from __future__ import annotations

import inspect

# Keyword arguments of a launch that are options of the launch, not kernel parameters
# (triton.Config's and JITFunction.run's own).
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
                  "launch_pdl", "num_buffers_warp_spec", "num_consumer_groups", "reg_dec_producer", "reg_inc_consumer")
# Set by JITFunction.run itself (never by the user's launch), left out of the record.
INTERNAL_KEYWORDS = ("debug", "instrumentation_mode", "warmup", "grid")


def is_tensor(value) -> bool:
    return hasattr(value, "data_ptr") and hasattr(value, "dtype") and hasattr(value, "stride")


def describe_value(value):
    """A JSON description of one argument. Tensors by metadata, numbers by value; a value that
    cannot be told is {"kind": "other", "type": ...} and makes the launch not replayable."""
    if value is None:
        return {"kind": "none"}
    if isinstance(value, bool):
        return {"kind": "bool", "value": value}
    if isinstance(value, int):
        return {"kind": "int", "value": value}
    if isinstance(value, float):
        return {"kind": "float", "value": value}
    if isinstance(value, str):
        return {"kind": "str", "value": value}
    if is_tensor(value):
        return {"kind": "tensor", "dtype": str(value.dtype).replace("torch.", ""), "shape": list(value.shape),
                "stride": list(value.stride()), "offset": int(value.storage_offset()), "device": str(value.device),
                "align16": value.data_ptr() % 16 == 0}
    type_name = type(value).__name__
    if type_name == "dtype" and type(value).__module__.startswith("triton"):
        return {"kind": "tl.dtype", "value": str(value)}
    if type_name == "constexpr" and hasattr(value, "value"):
        return describe_value(value.value)
    if isinstance(value, (tuple, list)):
        return {"kind": "tuple", "items": [describe_value(v) for v in value]}
    return {"kind": "other", "type": f"{type(value).__module__}.{type_name}"}


def signature_part(desc) -> tuple:
    """The part of an argument's description that tells launches apart: a tensor's dtype, shape,
    strides and alignment (not its address or offset), a scalar's value except a float's."""
    kind = desc["kind"]
    if kind == "tensor":
        return ("tensor", desc["dtype"], tuple(desc["shape"]), tuple(desc["stride"]), desc["align16"])
    if kind == "float":
        return ("float",)
    if kind == "tuple":
        return ("tuple",) + tuple(signature_part(d) for d in desc["items"])
    if kind == "other":
        return ("other", desc["type"])
    return (kind, desc.get("value"))


def parameter_defaults(py_fn) -> dict:
    """The kernel's parameters that have defaults, and those defaults."""
    try:
        params = inspect.signature(py_fn).parameters
    except (TypeError, ValueError):
        return {}
    return {name: p.default for name, p in params.items() if p.default is not inspect.Parameter.empty}


def constexpr_parameters(handle, py_fn) -> list:
    """The names of the kernel's tl.constexpr parameters (JITFunction.params, or the
    annotations under the interpreter)."""
    params = getattr(handle, "params", None)
    if params:
        return [p.name for p in params if getattr(p, "is_constexpr", False)]
    try:
        sig = inspect.signature(py_fn)
    except (TypeError, ValueError):
        return []
    out = []
    for name, p in sig.parameters.items():
        ann = p.annotation
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))
        if "constexpr" in str(text):
            out.append(name)
    return out


def bind_launch(arg_names, args, kwargs, defaults):
    """The launch's arguments by parameter name (positional, keyword, then defaults) and its
    options (num_warps, ...): (named, options, unknown keywords)."""
    named = dict(zip(arg_names, args))
    options, unknown = {}, {}
    for key, value in kwargs.items():
        if key in INTERNAL_KEYWORDS:
            continue
        if key in arg_names:
            named[key] = value
        elif key in LAUNCH_OPTIONS:
            options[key] = value
        else:
            unknown[key] = value
    for name in arg_names:
        if name not in named and name in defaults:
            named[name] = defaults[name]
    return named, options, unknown


def evaluate_grid(grid, named, options):
    """The grid as three integers, calling a grid function with the launch's arguments as
    Triton does; None when it cannot be evaluated."""
    try:
        if callable(grid):
            grid = grid({**named, **options})
        dims = [int(g) for g in grid]
    except Exception:  # a grid function that fails here fails the launch too: Triton reports it
        return None
    return (dims + [1, 1, 1])[:3]


def innermost_kernel(obj):
    """The JITFunction (or InterpretedFunction) under autotuner and heuristics wrappers,
    subclasses included (fla's CachedAutotuner is an Autotuner with its own run); None when
    wrapped more than 8 deep."""
    from triton.runtime import autotuner
    seen = 0
    while isinstance(obj, (autotuner.Autotuner, autotuner.Heuristics)) and seen < 8:
        obj = obj.fn
        seen += 1
    return None if isinstance(obj, (autotuner.Autotuner, autotuner.Heuristics)) else obj

"""The suite's kernels: discovery, task files, and loading their modules.

Each kernel lives in kernels/NAME/ with
  task.toml           the tritonforge task (name = NAME)
  <source>.py         the kernel as written and its launcher (the task's `source`)
  <harness>.py        make_inputs, reference, flops, bytes (the task's `harness`) and, for the
                      suite: vendor(*inputs), VENDOR (its name), PEAK ("fp16" | "bf16" | "tf32"
                      | "fp8" | "int8" | None: which matmul rate bounds it; None: memory only), SMALL_CASE,
                      and optionally vendors() -> {name: callable}: several vendor backends, each
                      timed, the fastest verified one compared (SDPA's backends for attention)
  NAME_autotune.py    make_launcher(mod, autotune, configs) -> the @triton.autotune variant

Nothing here imports torch: the driver (bench/run) runs without it.
"""

import importlib.util
import os
import sys
import tomllib

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS_DIR = os.path.join(BENCH_DIR, "kernels")

# The order of a full run: compute-bound kernels first, then attention, then memory-bound.
ORDER = [
    "matmul_fp16", "matmul_bf16", "matmul_tf32", "bmm_fp16", "matmul_bias_gelu", "matmul_outer",
    "matmul_fp8", "matmul_int8", "matmul_int4w", "bmm_small_k",
    "conv2d_nhwc", "conv2d_direct", "patch_embed",
    "attention", "attention_causal", "attention_gqa",
    "softmax", "softmax_decode", "layernorm", "rmsnorm", "cross_entropy", "swiglu", "argmax", "transpose",
]


class KernelSpec:
    def __init__(self, name, directory, task):
        self.name = name
        self.dir = directory
        self.task = task
        self.task_path = os.path.join(directory, "task.toml")
        self.source = os.path.join(directory, task["source"])
        self.harness = os.path.join(directory, task["harness"])
        self.launcher = task["launcher"]
        self.autotune = os.path.join(directory, f"{name}_autotune.py")
        self.cases = task["cases"]
        check = task.get("check", {})
        self.rtol = float(check.get("rtol", 1e-3))
        self.atol = float(check.get("atol", 1e-3))
        self.reference_precision = check.get("reference_precision", "float64")

    def to_request(self):
        return {"name": self.name, "dir": self.dir, "source": self.source, "harness": self.harness,
                "launcher": self.launcher, "autotune": self.autotune, "cases": self.cases,
                "rtol": self.rtol, "atol": self.atol, "reference_precision": self.reference_precision}


def load_spec(name):
    directory = os.path.join(KERNELS_DIR, name)
    path = os.path.join(directory, "task.toml")
    if not os.path.exists(path):
        raise LookupError(f"no kernel '{name}' (no {path})")
    with open(path, "rb") as f:
        task = tomllib.load(f)
    if task.get("name") != name:
        raise ValueError(f"{path}: name is '{task.get('name')}', expected '{name}' (the folder's name)")
    return KernelSpec(name, directory, task)


def all_names():
    present = sorted(d for d in os.listdir(KERNELS_DIR) if os.path.exists(os.path.join(KERNELS_DIR, d, "task.toml")))
    ordered = [n for n in ORDER if n in present]
    return ordered + [n for n in present if n not in ordered]


_COUNTER = [0]


def load_module(path, tag, package=None):
    """Loads a Python file as a fresh module (a new name each time, so that two loads of one
    kernel never share Triton's in-memory caches). With `package` ("attorch"), the module is
    one of that package's (imported first), so that its relative imports resolve."""
    _COUNTER[0] += 1
    base = os.path.splitext(os.path.basename(path))[0]
    name = f"bench_{tag}_{base}_{_COUNTER[0]}"
    if package:
        importlib.import_module(package)
        name = f"{package}.{name}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

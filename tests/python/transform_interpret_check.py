"""Runs golden outputs of the transformation passes under Triton's interpreter (CPU, torch)
on small shapes that the tiles do not divide, against torch. Run by
test_transform_interpret.py in a subprocess (TRITON_INTERPRET must be set before triton is
imported). Prints one line per case and exits 1 if any is wrong."""

import importlib.util
import math
import os
import sys
import types

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402

import interpreter_fixes  # noqa: E402

interpreter_fixes.apply()

# The launchers ask the GPU for its SM count and allocate on "cuda": give them a CPU stand-in.
torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(multi_processor_count=3)
torch.cuda.current_device = lambda: 0
_empty = torch.empty
torch.empty = lambda *a, **k: _empty(*a, **{x: v for x, v in k.items() if x != "device"})

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "transform")
gen = torch.Generator().manual_seed(0)


def load(path, n=[0]):
    n[0] += 1
    spec = importlib.util.spec_from_file_location(f"tf_interp_{n[0]}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def close(out, ref, rtol, atol):
    return torch.allclose(out.float(), ref.float(), rtol=rtol, atol=atol)


def matmul(mod, M, N, K):
    a, b = torch.randn(M, K, generator=gen).half(), torch.randn(K, N, generator=gen).half()
    out, ref = mod.matmul(a, b), a.float() @ b.float()
    extra = 0 if out.dtype == torch.float32 else 2e-3 * ref.abs().max().item()
    return close(out, ref, 2e-3, 2e-3 * math.sqrt(K) + extra)


def matmul_lower(mod, M, N, K):
    """A kernel that writes the lower triangle only: the rest of its output is left as it was."""
    a, b = torch.randn(M, K, generator=gen).half(), torch.randn(K, N, generator=gen).half()
    out, ref = mod.matmul(a, b), a.float() @ b.float()
    lower = torch.ones(M, N, dtype=torch.bool).tril()
    return close(out[lower], ref[lower], 2e-3, 2e-3 * math.sqrt(K) + 2e-3 * ref.abs().max().item())


def softmax(mod, M, N):
    x = torch.randn(M, N, generator=gen) * 3
    return close(mod.softmax(x), torch.softmax(x.double(), -1), 1e-4, 1e-6)


def layernorm(mod, M, N):
    x, w = torch.randn(M, N, generator=gen).half(), torch.rand(N, generator=gen).half() + 0.5
    b = torch.randn(N, generator=gen).half()
    ref = torch.nn.functional.layer_norm(x.double(), (N,), w.double(), b.double(), eps=1e-5)
    return close(mod.layernorm(x, w, b), ref, 2e-3, 2e-2)


def log_softmax(mod, M, N):
    x = (torch.randn(M, N, generator=gen) * 4).half()
    return close(mod.log_softmax(x), torch.log_softmax(x.double(), -1), 2e-3, 1e-2)


def scaled(mod, M, N):
    x = torch.randn(M, N, generator=gen)
    m = x.double().max(-1, keepdim=True).values
    ref = torch.exp(x.double() - m) / torch.exp(x.double() * 0.5 - m).sum(-1, keepdim=True)
    return close(mod.scaled(x), ref, 1e-4, 1e-7)


def add(mod, n):
    x, y = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
    return close(mod.add(x, y), x + y, 0, 0)


CASES = {
    "retile/matmul_tiles": (matmul, (100, 136, 72)),
    "grouped-order/matmul_tuple_grid": (matmul, (300, 136, 72)),
    "grouped-order/matmul_lambda_grid": (matmul, (300, 136, 72)),
    "split-k/atomic_matmul": (matmul, (100, 72, 600)),
    "split-k/atomic_pointer_advance": (matmul, (100, 72, 600)),
    "split-k/two_stage_matmul": (matmul, (100, 72, 600)),
    "split-k/two_stage_pointer_advance": (matmul, (100, 72, 600)),
    "persistent/matmul_2d": (matmul, (200, 136, 72)),
    "persistent/matmul_1d_derived": (matmul, (200, 136, 72)),
    "persistent/softmax_tiles_param": (softmax, (37, 100)),
    "persistent/add_1d": (add, (5000,)),
    "persistent/matmul_warp_specialize": (matmul, (200, 136, 72)),
    "persistent/descriptors_flatten_warp_specialize": (matmul, (300, 136, 72)),
    "tensor-cores/descriptor_loads": (matmul, (100, 136, 72)),
    "tensor-cores/descriptor_loads_stores": (matmul, (100, 136, 72)),
    "tensor-cores/descriptor_stores_persistent": (matmul, (300, 136, 72)),
    "tensor-cores/descriptor_store_named_pointer": (matmul, (300, 136, 72)),
    "tensor-cores/keep_store_mask_not_bounds": (matmul_lower, (100, 136, 72)),
    "tensor-cores/block_pointer_loads": (matmul, (100, 136, 72)),
    "autotune/bake_second_config": (matmul, (100, 136, 72)),
    "memory-hints/offsets_matmul": (matmul, (100, 136, 72)),
    "rows-per-program/softmax": (softmax, (37, 100)),
    "rows-per-program/layernorm_pipelined": (layernorm, (37, 100)),
    "rows-per-program/block_softmax": (softmax, (37, 100)),
    "rows-per-program/block_layernorm": (layernorm, (37, 200)),
    "column-loop/softmax": (softmax, (3, 9000)),
    "column-loop/softmax_passes": (softmax, (3, 9000)),
    "column-loop/log_softmax": (log_softmax, (3, 5000)),
    "column-loop/online_needs_same_values": (scaled, (3, 9000)),
    "column-loop/layernorm": (layernorm, (3, 5000)),
    "vectorize/add_block": (add, (5000,)),
}

if __name__ == "__main__":
    wrong = 0
    for case, (fn, shape) in CASES.items():
        try:
            ok = fn(load(os.path.join(GOLDEN, case, "expected.py")), *shape)
            msg = "ok" if ok else "WRONG"
        except Exception as exc:  # reported, the run goes on
            ok, msg = False, f"ERROR {type(exc).__name__}: {exc}"
        wrong += not ok
        print(f"{case} {shape}: {msg}", flush=True)
    sys.exit(1 if wrong else 0)

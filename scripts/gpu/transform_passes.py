#!/usr/bin/env python3
"""Each transformation pass on the GPU: correct against a torch reference on several shapes
(including sizes the tiles do not divide), and what it gains against the same kernel without it.

    python3 scripts/gpu/transform_passes.py OUT_DIR [--only NAME,NAME] [--quick]

Needs build/tritonforge (it makes every variant with `tritonforge transform`), torch and triton,
and a CUDA GPU. Writes OUT_DIR/variants/*.py (the sources measured), OUT_DIR/results.json,
OUT_DIR/transforms-h200.md (commit it as docs/transforms-h200.md), and prints a short table last.
About 3 minutes on an H200 (most of it compiling the big-tile matmuls and the 64K-row softmax).

What it checks (the issue's "Done when"):
  grouped-order      on a large fp16 matmul (8192^3)           against the same 2-D-grid kernel
  split-k            on 256 x 256 x 65536 (long K, few tiles)   atomic and two-stage, against no split
  rows-per-program   on a short-row softmax (262144 x 64)       against one row per program
  persistent, TMA    on an 8192^3 matmul                        against the same non-persistent kernel
  column-loop        on rows of 65536 fp32 (> 32K)              against the whole row in one block
and, for the other passes, correctness and the time against their base.
"""

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
import traceback

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KERNELS = os.path.join(ROOT, "scripts", "gpu", "transform_kernels")
BIN = os.path.join(ROOT, "build", "tritonforge")


def log(*a):
    print(*a, flush=True)


# --- variants ------------------------------------------------------------------------------

class Variants:
    """Sources made with `tritonforge transform`, by name."""

    def __init__(self, out_dir):
        self.dir = os.path.join(out_dir, "variants")
        os.makedirs(self.dir, exist_ok=True)
        self.paths = {}
        self.errors = {}

    def base(self, name, path):
        self.paths[name] = path

    def make(self, name, base, kernel, spec, extra=()):
        if base not in self.paths:
            self.errors[name] = f"its base '{base}' is missing"
            return None
        out = os.path.join(self.dir, name + ".py")
        cmd = [BIN, "transform", self.paths[base], "--kernel", kernel, "--pass", spec, "--no-compile", "-o", out, *extra]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            self.errors[name] = (r.stderr.strip() or r.stdout.strip())[-400:]
            log(f"  transform {name}: {self.errors[name]}")
            return None
        self.paths[name] = out
        return out


_loaded = {}


def load(path):
    if path in _loaded:
        return _loaded[path]
    name = "tfv_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_") + f"_{len(_loaded)}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    _loaded[path] = mod
    return mod


# --- families: inputs, references, tolerances ----------------------------------------------

def mm_inputs(shape, seed=0):
    import torch
    M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16, generator=g)
    return (a, b)


def mm_check(out, inputs):
    import torch
    a, b = inputs
    ref = a.float() @ b.float()
    K = a.shape[1]
    # fp32 accumulation in another order, then the output's rounding.
    atol = 2e-3 * math.sqrt(K) + (0.0 if out.dtype == torch.float32 else 2e-3 * ref.abs().max().item())
    return compare(out.float(), ref, rtol=2e-3, atol=atol)


def mm32_inputs(shape, seed=0):
    import torch
    M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(M, K, device="cuda", generator=g), torch.randn(K, N, device="cuda", generator=g))


def mm32_check(out, inputs, rtol=1e-2):
    import torch
    a, b = inputs
    ref = (a.double() @ b.double()).float()
    return compare(out.float(), ref, rtol=rtol, atol=rtol * math.sqrt(a.shape[1]))


def rows_inputs(shape, seed=0):
    import torch
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(*shape, device="cuda", dtype=torch.float32, generator=g) * 3,)


def softmax_check(out, inputs):
    import torch
    return compare(out, torch.softmax(inputs[0].double(), dim=-1).float(), rtol=1e-4, atol=1e-6)


def ln_inputs(shape, seed=0):
    import torch
    M, N = shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(M, N, device="cuda", dtype=torch.float16, generator=g)
    w = torch.rand(N, device="cuda", dtype=torch.float16, generator=g) + 0.5
    b = torch.randn(N, device="cuda", dtype=torch.float16, generator=g)
    return (x, w, b)


def ln_check(out, inputs):
    import torch
    x, w, b = inputs
    ref = torch.nn.functional.layer_norm(x.double(), (x.shape[-1],), w.double(), b.double(), eps=1e-5).float()
    return compare(out.float(), ref, rtol=2e-3, atol=2e-2)


def add_inputs(shape, seed=0):
    import torch
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape[0], device="cuda", generator=g), torch.randn(shape[0], device="cuda", generator=g))


def add_check(out, inputs):
    return compare(out, inputs[0] + inputs[1], rtol=0, atol=0)


def compare(out, ref, rtol, atol):
    import torch
    if out.shape != ref.shape:
        return False, f"shape {tuple(out.shape)} != {tuple(ref.shape)}"
    bad = ~torch.isclose(out, ref, rtol=rtol, atol=atol)
    bad |= torch.isnan(out) != torch.isnan(ref)
    n = int(bad.sum().item())
    if n == 0:
        return True, ""
    err = (out - ref).abs()
    return False, f"{n} of {out.numel()} elements off (max abs error {err.max().item():.3g})"


FAMILIES = {
    # launcher name, inputs, check, correctness shapes (tiles do not divide most of them)
    "matmul": ("matmul", mm_inputs, mm_check, [(1000, 1064, 520), (257, 136, 2056), (64, 64, 64)]),
    "matmul32": ("matmul", mm32_inputs, mm32_check, [(1000, 1064, 520), (130, 72, 264)]),
    "softmax": ("softmax", rows_inputs, softmax_check, [(1000, 100), (37, 1000), (5, 4097)]),
    "layernorm": ("layernorm", ln_inputs, ln_check, [(1000, 100), (7, 5000)]),
    "add": ("add", add_inputs, add_check, [(1000,), (1 << 20,), (123457,)]),
}


# Rows longer than 32K only where the pass is about them (a whole-row block of 64K values
# takes long to compile, so the other row variants skip them).
EXTRA_SHAPES = {"column-loop": [(3, 40000), (2, 70000)], "column-loop-layernorm": [(3, 40000)]}


# --- running -------------------------------------------------------------------------------

def check(family, path, extra=()):
    fn_name, make, chk, shapes = FAMILIES[family]
    shapes = list(shapes) + list(extra)
    import torch
    fn = getattr(load(path), fn_name)
    failures = []
    for shape in shapes:
        try:
            inputs = make(shape)
            out = fn(*inputs)
            torch.cuda.synchronize()
            ok, why = chk(out, inputs)
            if not ok:
                failures.append(f"{shape}: {why}")
        except Exception as exc:  # a failure is a result
            failures.append(f"{shape}: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
    return failures


def bench(family, path, shape):
    import torch
    import triton
    fn_name, make, chk, _ = FAMILIES[family]
    fn = getattr(load(path), fn_name)
    inputs = make(shape)
    out = fn(*inputs)  # compile (and autotune) outside the timing
    torch.cuda.synchronize()
    ok, why = chk(out, inputs)
    ms = triton.testing.do_bench(lambda: fn(*inputs), warmup=25, rep=100, return_mode="median")
    return ms, ok, why


def work(family, shape):
    if family.startswith("matmul"):
        M, N, K = shape
        return 2.0 * M * N * K, "TFLOP/s"
    if family == "add":
        return 12.0 * shape[0], "GB/s"
    if family == "softmax":
        return 8.0 * shape[0] * shape[1], "GB/s"
    return 0.0, ""


def rate(family, shape, ms):
    w, unit = work(family, shape)
    if not w or not ms:
        return ""
    per_s = w / (ms * 1e-3)
    return f"{per_s / 1e12:.0f} {unit}" if unit == "TFLOP/s" else f"{per_s / 1e9:.0f} {unit}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--only", default="", help="comma-separated experiment names")
    ap.add_argument("--quick", action="store_true", help="smaller performance shapes")
    ap.add_argument("--dry-run", action="store_true", help="only make the variants (no GPU, no torch needed)")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    if not os.path.exists(BIN):
        sys.exit(f"{BIN} is missing: build the tritonforge target first")
    t_start = time.time()

    big = (4096, 4096, 4096) if args.quick else (8192, 8192, 8192)
    mid = (4096, 4096, 4096)
    V = Variants(args.out_dir)
    ex = os.path.join(ROOT, "examples")
    V.base("matmul_naive", os.path.join(ex, "matmul", "matmul.py"))
    V.base("softmax", os.path.join(ex, "softmax", "softmax.py"))
    V.base("add", os.path.join(KERNELS, "add.py"))
    V.base("layernorm_row", os.path.join(KERNELS, "layernorm_row.py"))
    V.base("matmul_f32out", os.path.join(KERNELS, "matmul_f32out.py"))
    MK = "matmul_kernel"
    # Bases built with the passes themselves: 128x128x64 tiles, 8 warps, 3 stages.
    V.make("mm128", "matmul_naive", MK, "retile:BLOCK_M=128,BLOCK_N=128,BLOCK_K=64")
    V.make("mm128w8", "mm128", MK, "launch:num_warps=8,num_stages=3")
    V.make("mm128w8_grouped", "mm128w8", MK, "grouped-order:group=8")

    # name: (pass, family, base, variant, [kernel, spec] or None, perf shape or None)
    experiments = [
        ("retile", "retile", "matmul", "matmul_naive", "mm128", None, mid),
        ("launch", "launch", "matmul", "mm128", "mm128w8", None, mid),
        ("grouped-order", "grouped-order", "matmul", "mm128w8", "mm128w8_grouped", None, big),
        ("persistent", "persistent", "matmul", "mm128w8_grouped", "mm_persistent", (MK, "persistent"), big),
        ("persistent-flatten", "persistent", "matmul", "mm128w8_grouped", "mm_persistent_flat",
         (MK, "persistent:flatten=1"), big),
        ("tma-descriptors", "tensor-cores", "matmul", "mm128w8", "mm_tma", (MK, "tensor-cores:loads=descriptor"), big),
        ("tma-descriptors-grouped", "tensor-cores", "matmul", "mm128w8_grouped", "mm_grouped_tma",
         (MK, "tensor-cores:loads=descriptor"), big),
        ("block-pointers", "tensor-cores", "matmul", "mm128w8", "mm_blockptr", (MK, "tensor-cores:loads=block-pointer"),
         mid),
        ("split-k-atomic", "split-k", "matmul", "matmul_f32out", "mm_splitk_atomic", (MK, "split-k:split=16"),
         (256, 256, 65536)),
        ("split-k-two-stage", "split-k", "matmul", "matmul_f32out", "mm_splitk_two",
         (MK, "split-k:mode=two-stage,split=16"), (256, 256, 65536)),
        ("memory-hints-stages", "memory-hints", "matmul", "mm128w8", "mm_stages4", (MK, "memory-hints:stages=4"), mid),
        ("memory-hints-offsets", "memory-hints", "matmul", "mm128w8", "mm_offsets", (MK, "memory-hints:offsets=1"), None),
        ("autotune-bake", "autotune", "matmul", "mm128w8", "mm_baked", None, None),
        ("rows-per-program", "rows-per-program", "softmax", "softmax", "sm_rows8",
         ("softmax_rows", "rows-per-program:rows=8"), (262144, 64)),
        ("rows-per-program-pipelined", "rows-per-program", "softmax", "softmax", "sm_rows8_s2",
         ("softmax_rows", "rows-per-program:rows=8,stages=2"), (262144, 64)),
        ("rows-per-program-block", "rows-per-program", "softmax", "softmax", "sm_rows16_block",
         ("softmax_rows", "rows-per-program:mode=block,rows=16"), (262144, 64)),
        ("column-loop", "column-loop", "softmax", "softmax", "sm_columns", ("softmax_rows", "column-loop:block=4096"),
         (512, 65536)),
        ("column-loop-layernorm", "column-loop", "layernorm", "layernorm_row", "ln_columns",
         ("layernorm_row", "column-loop:block=4096"), None),
        ("memory-hints-cache", "memory-hints", "softmax", "softmax", "sm_cg", ("softmax_rows", "memory-hints:cache=cg"),
         (32768, 4096)),
        ("vectorize", "vectorize", "add", "add", "add_vec", ("add_kernel", "vectorize"), (1 << 26,)),
        ("vectorize-rows", "vectorize", "softmax", "softmax", "sm_vec", ("softmax_rows", "vectorize:elems=8"),
         (32768, 4096)),
        ("autotune", "autotune", "add", "add", "add_autotuned", ("add_kernel", "autotune:key=n"), (1 << 26,)),
    ]
    # The baked matmul: autotune mm128w8 with two configs, then bake the second one in.
    V.make("mm_autotuned", "mm128w8", MK,
           "autotune:configs=[BLOCK_M=128 BLOCK_N=128 BLOCK_K=64 num_warps=8 num_stages=3; "
           "BLOCK_M=128 BLOCK_N=64 BLOCK_K=64 num_warps=4 num_stages=4]")
    V.make("mm_baked", "mm_autotuned", MK, "autotune:mode=bake,config=1")
    only = set(x for x in args.only.split(",") if x)
    if args.dry_run:
        for name, _, _, base, variant, make_spec, _ in experiments:
            if make_spec and (not only or name in only):
                V.make(variant, base, make_spec[0], make_spec[1])
        for name, path in sorted(V.paths.items()):
            log(f"{name:28s} {os.path.relpath(path, ROOT)}")
        for name, why in V.errors.items():
            log(f"{name:28s} FAILED: {why}")
        sys.exit(1 if V.errors else 0)

    import torch
    import triton
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU")
    gpu = torch.cuda.get_device_name(0)
    log(f"{gpu}, torch {torch.__version__}, triton {triton.__version__}")
    results = []
    for name, pass_name, family, base, variant, make_spec, perf in experiments:
        if only and name not in only:
            continue
        t0 = time.time()
        rec = {"experiment": name, "pass": pass_name, "family": family, "base": base, "variant": variant,
               "perf_shape": list(perf) if perf else None}
        if make_spec:
            V.make(variant, base, make_spec[0], make_spec[1])
            rec["spec"] = make_spec[1]
        if variant not in V.paths:
            rec["error"] = V.errors.get(variant, "not made")
            results.append(rec)
            continue
        try:
            rec["failures"] = check(family, V.paths[variant], EXTRA_SHAPES.get(name, ()))
            if perf:
                base_ms, base_ok, base_why = bench(family, V.paths[base], perf)
                var_ms, var_ok, var_why = bench(family, V.paths[variant], perf)
                rec.update(base_ms=base_ms, variant_ms=var_ms, speedup=base_ms / var_ms,
                           base_rate=rate(family, perf, base_ms), variant_rate=rate(family, perf, var_ms))
                if not var_ok:
                    rec["failures"].append(f"{tuple(perf)}: {var_why}")
                if not base_ok:
                    rec["base_failure"] = base_why
        except Exception as exc:
            rec["error"] = f"{type(exc).__name__}: {exc}"[:400]
            traceback.print_exc()
        rec["seconds"] = round(time.time() - t0, 1)
        status = "ok" if not rec.get("error") and not rec.get("failures") else "FAIL"
        speed = f"{rec['speedup']:.2f}x" if "speedup" in rec else ""
        log(f"{name:28s} {status:4s} {speed:>7s}  ({rec['seconds']} s) {rec.get('error', '')} {rec.get('failures', '')}")
        results.append(rec)
        torch.cuda.empty_cache()

    summary = {"gpu": gpu, "torch": torch.__version__, "triton": triton.__version__,
               "date": time.strftime("%Y-%m-%d", time.gmtime()), "seconds": round(time.time() - t_start, 1),
               "transform_errors": V.errors, "results": results}
    with open(os.path.join(args.out_dir, "results.json"), "w") as f:
        json.dump(summary, f, indent=2)
    md = markdown(summary)
    with open(os.path.join(args.out_dir, "transforms-h200.md"), "w") as f:
        f.write(md)
    log("")
    log(table(results))
    log(f"\n{len(results)} experiments in {summary['seconds']} s; wrote {args.out_dir}/transforms-h200.md")


def shape_text(s):
    return "x".join(str(x) for x in s) if s else ""


def table(results):
    lines = [f"{'experiment':28s} {'correct':8s} {'shape':16s} {'base ms':>9s} {'pass ms':>9s} {'gain':>6s}"]
    for r in results:
        correct = "error" if r.get("error") else ("yes" if not r.get("failures") else "NO")
        base = f"{r['base_ms']:.3f}" if "base_ms" in r else ""
        var = f"{r['variant_ms']:.3f}" if "variant_ms" in r else ""
        gain = f"{r['speedup']:.2f}x" if "speedup" in r else ""
        lines.append(f"{r['experiment']:28s} {correct:8s} {shape_text(r.get('perf_shape')):16s} {base:>9s} {var:>9s} {gain:>6s}")
    return "\n".join(lines)


def markdown(s):
    out = [f"# Transformation passes on the {s['gpu']}", "",
           f"Measured {s['date']} with torch {s['torch']}, triton {s['triton']} by "
           "`scripts/gpu/transform_passes.py` ({} s in all). Every variant was made by `tritonforge transform` "
           "from its base; times are `triton.testing.do_bench` medians (L2 flushed before each run), base and "
           "variant on the same inputs.".format(s["seconds"]), "",
           "| experiment | pass | base -> variant | correct on | perf shape | base | with the pass | gain |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in s["results"]:
        fam = FAMILIES[r["family"]]
        shapes = ", ".join(shape_text(x) for x in list(fam[3]) + EXTRA_SHAPES.get(r["experiment"], []))
        if r.get("error"):
            correct = "error: " + r["error"].replace("|", "/").replace("\n", " ")[:160]
        elif r.get("failures"):
            correct = "**NO**: " + "; ".join(r["failures"]).replace("|", "/")[:200]
        else:
            correct = shapes + (", " + shape_text(r["perf_shape"]) if r.get("perf_shape") else "")
        base = f"{r['base_ms']:.3f} ms ({r['base_rate']})" if "base_ms" in r else ""
        var = f"{r['variant_ms']:.3f} ms ({r['variant_rate']})" if "variant_ms" in r else ""
        gain = f"{r['speedup']:.2f}x" if "speedup" in r else ""
        spec = f"`{r['spec']}`" if r.get("spec") else ""
        out.append(f"| {r['experiment']} | {r['pass']} {spec} | {r['base']} -> {r['variant']} | {correct} | "
                   f"{shape_text(r.get('perf_shape'))} | {base} | {var} | {gain} |")
    out += ["", "Bases: `matmul_naive` is examples/matmul (32x32x32 tiles); `mm128` retiles it to 128x128x64; "
            "`mm128w8` adds 8 warps, 3 stages; `mm128w8_grouped` adds grouped-order (GROUP_M=8); "
            "`matmul_f32out` is a 64x64x64 fp16 -> fp32 matmul; `softmax` is examples/softmax (one row per program, "
            "the whole row in one block, 4 warps); `add` and `layernorm_row` are in scripts/gpu/transform_kernels/.",
            "", "The variants' sources are in the run's variants/ folder."]
    if s["transform_errors"]:
        out += ["", "Transforms that failed:", ""]
        for k, v in s["transform_errors"].items():
            out.append(f"- {k}: {v}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()

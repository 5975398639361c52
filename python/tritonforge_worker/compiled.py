"""The `compile` op: ahead-of-time compile of one kernel for a given target, on any machine.

No GPU is needed: triton.compile(ASTSource(...), target=GPUTarget(...)). The signature and
constexprs come from the caller (the C++ core got them from a captured launch on a GPU
machine, or from the task file). Facts returned: shared memory, warps, stages, the sizes of
each stage's text, registers / stack / local memory read from the cubin with cuobjdump, and,
when asked, the texts themselves (ptx, sass, ttgir) for the C++ side to analyse.
"""

import os
import re
import shutil
import subprocess
import tempfile
import time

from .modules import load_module_from_path, find_jit_function, stub_torch_if_missing


def tool_paths():
    """Paths of the CUDA tools (PATH first, then the ones Triton's wheel ships). Tools named in
    TRITONFORGE_HIDE_TOOLS (comma-separated) count as missing: tests use it to check the
    fallbacks."""
    tools = {}
    hidden = {t.strip() for t in os.environ.get("TRITONFORGE_HIDE_TOOLS", "").split(",") if t.strip()}
    bindir = None
    try:
        import triton
        bindir = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    except Exception:
        pass
    for name in ("cuobjdump", "ptxas", "nvdisasm", "ncu"):
        path = shutil.which(name)
        if path is None and bindir and os.path.exists(os.path.join(bindir, name)):
            path = os.path.join(bindir, name)
        tools[name] = None if name in hidden else path
    return tools


def parse_resource_usage(text):
    """Parses `cuobjdump --dump-resource-usage` output: {function: {REG: n, STACK: n, ...}}."""
    out = {}
    current = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("Function "):
            current = s[len("Function "):].rstrip(":")
            out[current] = {}
        elif current is not None and ":" in s and s.split(":")[0].isupper():
            for tok in s.split():
                if ":" in tok:
                    k, _, v = tok.partition(":")
                    try:
                        out[current][k] = int(v)
                    except ValueError:
                        pass
    return out


def cubin_facts(cubin, want_sass=False, timeout=60):
    tools = tool_paths()
    facts = {"tool": None}
    exe = tools.get("cuobjdump")
    if not exe or not cubin:
        facts["tool_missing"] = "cuobjdump"
        return facts
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        path = f.name
    try:
        r = subprocess.run([exe, "--dump-resource-usage", path], capture_output=True, text=True, timeout=timeout)
        facts["tool"] = exe
        usage = parse_resource_usage(r.stdout)
        if usage:
            name, vals = next(iter(usage.items()))
            facts.update(function=name, registers=vals.get("REG"), stack_bytes=vals.get("STACK"),
                         local_bytes=vals.get("LOCAL"), static_shared_bytes=vals.get("SHARED"))
        if want_sass:
            r = subprocess.run([exe, "--dump-sass", path], capture_output=True, text=True, timeout=timeout)
            if r.returncode == 0 and r.stdout.strip():
                facts["sass"] = r.stdout
            else:
                facts["sass_error"] = f"cuobjdump --dump-sass failed (exit {r.returncode}): {r.stderr.strip()[:200]}"
    finally:
        os.unlink(path)
    return facts


def ptxas_spills(ptx, arch, timeout=120):
    """Runs ptxas -v on the PTX to read spill stores/loads (the cubin alone does not say)."""
    import re
    exe = tool_paths().get("ptxas")
    if not exe:
        return None
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        gpu = f"sm_{arch}a" if int(arch) >= 90 else f"sm_{arch}"
        r = subprocess.run([exe, "-v", f"--gpu-name={gpu}", src, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True, timeout=timeout)
    text = r.stdout + r.stderr
    m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
    if not m:
        return None
    return {"spill_store_bytes": int(m.group(1)), "spill_load_bytes": int(m.group(2))}


def _parse_target(target):
    from triton.backends.compiler import GPUTarget
    backend = target.get("backend", "cuda")
    arch = target.get("arch", 90)
    warp = target.get("warp_size", 32)
    return GPUTarget(backend, arch, warp)


def _parse_signature(fn, signature, constexprs):
    """Accepts {"param": "*fp16" | "i32" | "constexpr"}; fills in constexpr entries."""
    sig = {}
    for name in fn.arg_names:
        if name in constexprs:
            sig[name] = "constexpr"
        elif name in signature:
            sig[name] = signature[name]
        else:
            raise ValueError(f"signature has no type for parameter '{name}'")
    return sig


def _attrs(fn, signature, attrs):
    """Divisibility hints: {"param": 16}; by default every pointer is taken as 16-byte aligned,
    which is what torch's allocator gives and what the JIT would specialize on."""
    out = {}
    given = attrs or {}
    for i, name in enumerate(fn.arg_names):
        ty = signature.get(name)
        if ty is None or ty == "constexpr":
            continue
        div = given.get(name)
        if div is None and isinstance(ty, str) and ty.startswith("*"):
            div = 16
        if div:
            out[(i,)] = [["tt.divisibility", int(div)]]
    return out


def op_compile(args):
    import triton
    from triton.compiler import ASTSource

    stubbed = stub_torch_if_missing()
    module = load_module_from_path(args["path"], args.get("module_name"), args.get("search_path"), args.get("package"))
    gluon_fn = _gluon_function(module, args["kernel"])
    fn = gluon_fn or find_jit_function(module, args["kernel"])
    constexprs = dict(args.get("constexprs") or {})
    options = dict(args.get("options") or {})
    signature = dict(args.get("signature") or {})
    if args.get("config"):
        skipped = _apply_config(module, args["config"], constexprs, options)
        if skipped:
            return {"skipped": True, "reason": skipped}
    if gluon_fn is not None:
        signature = {name: _gluon_descriptor_type(ty, constexprs) for name, ty in signature.items()}
    signature = _parse_signature(fn, signature, constexprs)
    attrs = _attrs(fn, signature, args.get("attrs"))
    target = _parse_target(args.get("target") or {})
    t0 = time.time()
    try:
        if gluon_fn is not None:
            from triton.experimental.gluon._runtime import GluonASTSource
            names = list(fn.arg_names)
            keyed = {(names.index(k),): v for k, v in constexprs.items() if k in names}
            src = GluonASTSource(fn, signature, keyed, attrs)
        else:
            src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
        kernel = triton.compile(src, target=target, options=options)
    except Exception as exc:
        kind = classify_compile_error(exc)
        exc.tf_data = {"status": kind}
        raise
    seconds = time.time() - t0
    return describe_compiled(kernel, seconds, args.get("want") or [], target.arch, torch_stubbed=stubbed)


def _gluon_function(module, name):
    """The module's @gluon.jit function `name`, or None (no such function, or no Gluon)."""
    try:
        from triton.experimental.gluon._runtime import GluonJITFunction
    except ImportError:
        return None
    obj = getattr(module, name, None)
    return obj if isinstance(obj, GluonJITFunction) else None


def _apply_config(module, config, constexprs, options):
    """Sets the constexprs / num_warps a module function gives from the kernel's constexprs
    (a companion's config, transform/pass.h); returns why it is not compiled, or None."""
    fn = getattr(module, config["function"], None)
    if not callable(fn):
        raise LookupError(f"the module has no function {config['function']}")
    values = []
    for a in config.get("args") or []:
        a = str(a)
        values.append(int(a) if a.lstrip("-").isdigit() else constexprs[a])
    got = fn(*values)
    if got is None:
        return f"{config['function']}{tuple(values)} is None: those tiles launch the kernel as written"
    for name, value in zip(config.get("sets") or [], got):
        if name in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
            options[name] = int(value)
        else:
            constexprs[name] = int(value)
    return None


def _gluon_descriptor_type(ty, constexprs):
    """"tensordesc<fp16[BLOCK_M, BLOCK_K]>" -> the same with its block resolved from the
    constexprs and Gluon's default shared layout for it, as the launch builds it."""
    m = re.fullmatch(r"tensordesc<(\w+)\[([^\]]*)\]>", ty) if isinstance(ty, str) else None
    if not m:
        return ty
    from triton.experimental.gluon import language as gl
    elem = m.group(1)
    types = {"fp16": gl.float16, "bf16": gl.bfloat16, "fp8e4nv": gl.float8e4nv, "fp8e5": gl.float8e5,
             "i8": gl.int8, "fp32": gl.float32}
    if elem not in types:
        raise ValueError(f"a tensor descriptor of {elem}: Gluon's wgmma takes {', '.join(types)}")
    dims = []
    for d in m.group(2).split(","):
        d = d.strip()
        dims.append(int(d) if d.isdigit() else int(constexprs[d]))
    layout = gl.NVMMASharedLayout.get_default_for(dims, types[elem])
    return f"tensordesc<{elem}[{', '.join(map(str, dims))}],{layout!r}>"


def classify_compile_error(exc):
    text = f"{type(exc).__name__}: {exc}".lower()
    if "outofresources" in text.replace(" ", "") or "out of resource" in text or "shared memory" in text and "exceed" in text:
        return "out-of-resources"
    return "compile-error"


def describe_compiled(kernel, seconds, want, arch, torch_stubbed=False):
    md = kernel.metadata
    asm = kernel.asm
    sizes = {k: len(v) for k, v in asm.items() if k != "source"}
    result = {
        "name": getattr(md, "name", None),
        "num_warps": md.num_warps,
        "num_stages": md.num_stages,
        "num_ctas": getattr(md, "num_ctas", 1),
        "maxnreg": getattr(md, "maxnreg", None),
        "shared_bytes": md.shared,
        "sizes": sizes,
        "compile_seconds": round(seconds, 4),
        "torch_stubbed": torch_stubbed,
    }
    cubin = asm.get("cubin")
    facts = cubin_facts(cubin, want_sass="sass" in want)
    result["cubin"] = {k: v for k, v in facts.items() if k not in ("sass", "sass_error")}
    if "sass" in want and "sass" in facts:
        result["sass"] = facts["sass"]
    if "sass" in want and "sass" not in facts:
        result["sass_error"] = facts.get("sass_error") or (
            "cuobjdump was not found" if facts.get("tool_missing") else "no cubin to disassemble")
    if "spills" in want and "ptx" in asm:
        result["spills"] = ptxas_spills(asm["ptx"], arch)
    for key in ("ptx", "ttgir", "ttir"):
        if key in want and key in asm:
            result[key] = asm[key]
    return result

"""The suite's files, checked without torch or a GPU: every kernel folder is complete, its
task's [signature] lets the sm_90 compile check run, and tritonforge's analysis finds the
tunables this suite expects it to find."""

import ast
import json
import os
import subprocess
import tomllib

import pytest

from benchlib import suite

REPO = os.path.dirname(suite.BENCH_DIR)
TRITONFORGE = os.path.join(REPO, "build", "tritonforge")

# What `tritonforge analyze` must report as tuned for each kernel (ids without the kernel
# name), and what it must leave alone. A change here is a change in what the suite measures.
EXPECTED_TUNED = {
    "matmul_fp16": {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"},
    "matmul_bf16": {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"},
    "matmul_tf32": {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"},
    "bmm_fp16": {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"},
    "bmm_small_k": {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"},
    "matmul_bias_gelu": {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"},
    "conv2d_nhwc": {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"},
    "conv2d_direct": {"BLOCK_M", "BLOCK_N", "num_warps", "num_stages"},
    "matmul_outer": {"BLOCK_M", "BLOCK_N", "num_warps", "num_stages"},
    "matmul_fp8": {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"},
    "matmul_int8": {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"},
    "matmul_int4w": {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"},
    "patch_embed": {"BLOCK_M", "BLOCK_N", "num_warps", "num_stages"},
    "attention": {"BLOCK_M", "BLOCK_N", "num_warps", "num_stages"},
    "attention_causal": {"BLOCK_M", "BLOCK_N", "num_warps", "num_stages"},
    "attention_gqa": {"BLOCK_M", "BLOCK_N", "num_warps", "num_stages"},
    "softmax": {"BLOCK_SIZE", "num_warps", "num_stages"},
    "softmax_decode": {"BLOCK_SIZE", "num_warps", "num_stages"},
    "layernorm": {"num_warps"},
    "rmsnorm": {"BLOCK_SIZE", "num_warps", "num_stages"},
    "cross_entropy": {"BLOCK_SIZE", "num_warps", "num_stages"},
    "swiglu": {"BLOCK", "num_warps"},
    "argmax": {"BLOCK_SIZE", "num_warps", "num_stages"},
    "transpose": {"BLOCK_M", "BLOCK_N", "num_warps"},
}
# Parameters that span a whole dimension: tuning them would change what is computed.
EXPECTED_LEFT_ALONE = {
    "attention": {"HEAD_DIM"},
    "attention_causal": {"HEAD_DIM"},
    "attention_gqa": {"HEAD_DIM"},
    "patch_embed": {"PATCH"},
    "matmul_int4w": {"GROUP_SIZE"},
    "layernorm": {"BLOCK_N", "num_stages"},
    "swiglu": {"num_stages"},
    "transpose": {"num_stages"},
}
HARNESS_FUNCTIONS = {"make_inputs", "reference", "vendor", "flops", "bytes"}
HARNESS_NAMES = {"PEAK", "VENDOR", "SMALL_CASE", "DEVICE"}


def _tree(path):
    with open(path) as f:
        return ast.parse(f.read(), filename=path)


def _jit_kernels(tree):
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            out[node.name] = node
    return out


def test_suite_has_the_kernels_the_issue_asks_for():
    names = suite.all_names()
    assert names == suite.ORDER
    assert len(names) >= 14
    assert set(EXPECTED_TUNED) == set(names)


@pytest.mark.parametrize("name", suite.ORDER)
def test_kernel_folder_is_complete(name):
    spec = suite.load_spec(name)
    for path in (spec.source, spec.harness, spec.autotune):
        assert os.path.exists(path), path
    harness = _tree(spec.harness)
    defined = {n.name for n in harness.body if isinstance(n, ast.FunctionDef)}
    assigned = {t.id for n in harness.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    assert HARNESS_FUNCTIONS <= defined, HARNESS_FUNCTIONS - defined
    assert HARNESS_NAMES <= assigned, HARNESS_NAMES - assigned
    peak = next(n.value for n in harness.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "PEAK")
    assert ast.literal_eval(peak) in (None, "fp16", "bf16", "tf32", "fp8", "int8")
    small = next(n.value for n in harness.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "SMALL_CASE")
    assert set(ast.literal_eval(small)) == set(spec.cases[0]), "SMALL_CASE must have the case's keys"
    autotune = _tree(spec.autotune)
    assert "make_launcher" in {n.name for n in autotune.body if isinstance(n, ast.FunctionDef)}
    source = _tree(spec.source)
    assert spec.launcher in {n.name for n in source.body if isinstance(n, ast.FunctionDef)}
    assert "autotune" not in ast.unparse(source), "the kernel as written must not autotune"


@pytest.mark.parametrize("name", suite.ORDER)
def test_signature_covers_every_runtime_parameter(name):
    spec = suite.load_spec(name)
    kernels = _jit_kernels(_tree(spec.source))
    sigs = spec.task.get("signature", {})
    assert set(sigs) == set(kernels), "one [signature.KERNEL] per kernel"
    for kname, node in kernels.items():
        runtime = [a.arg for a in node.args.args if not (a.annotation is not None and "constexpr" in ast.unparse(a.annotation))]
        missing = [p for p in runtime if p not in sigs[kname]]
        assert not missing, f"{kname}: no type for {missing}"
        for p, t in sigs[kname].items():
            assert isinstance(t, int) or t in ("*fp16", "*bf16", "*fp32", "*fp8e4nv", "*i8", "*i32", "*i64", "i32", "fp32"), (p, t)


@pytest.mark.skipif(not os.access(TRITONFORGE, os.X_OK), reason="build/tritonforge is not built")
@pytest.mark.parametrize("name", suite.ORDER)
def test_tritonforge_sees_the_tunables(name):
    spec = suite.load_spec(name)
    r = subprocess.run([TRITONFORGE, "analyze", "--json", "--launcher", spec.launcher, spec.source],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    items = json.loads(r.stdout)["tunables"][spec.launcher]
    tuned = {t["param"] for t in items if t["tunable"]}
    alone = {t["param"] for t in items if not t["tunable"]}
    assert tuned == EXPECTED_TUNED[name]
    assert alone == EXPECTED_LEFT_ALONE.get(name, set())

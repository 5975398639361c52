"""The worker compiles a Gluon companion ahead of time on the CPU (transform/pass.h, Companion):
descriptor types resolved from the constexprs with Gluon's default shared layouts, the
module's config giving stages and warps, and a config that declines the tiles reported as
skipped, not compiled."""

import os

import pytest

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "transform", "gluon-gemm", "fp8_scaled", "expected.py")

pytest.importorskip("triton.experimental.gluon")


def request(block):
    sig = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*bf16", "s_ptr": "*fp32", "M": "i32", "N": "i32",
           "K": "i32", "stride_am": "i32", "stride_bn": "i32", "stride_cm": "i32",
           "GRID_0": "i32", "GRID_1": "i32", "GRID_2": "i32",
           "a_desc": "tensordesc<fp8e4nv[BLOCK_M, BLOCK_K]>", "b_desc": "tensordesc<fp8e4nv[BLOCK_N, BLOCK_K]>"}
    return {"path": os.path.abspath(GOLDEN), "kernel": "_fp8_gemm_kernel_gluon", "signature": sig,
            "constexprs": {"BLOCK_M": block, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP": 8, "B_KMAJOR": 1},
            "config": {"function": "_fp8_gemm_kernel_gluon_config", "args": ["BLOCK_M", "BLOCK_N", "BLOCK_K", "1"],
                       "sets": ["STAGES", "num_warps"]}}


def test_gluon_companion_compiles_for_sm90():
    from tritonforge_worker.compiled import op_compile

    r = op_compile(request(128))
    # 4 stages (the golden asks for them) of 128x128 fp8 tiles of A and B: 128 KiB at least.
    assert r["shared_bytes"] >= 4 * 2 * 128 * 128
    assert not r.get("skipped")


def test_tiles_the_config_declines_are_skipped():
    from tritonforge_worker.compiled import op_compile

    r = op_compile(request(32))  # 32 rows: less than a warp group's 64
    assert r["skipped"] and "None" in r["reason"]


def test_an_element_type_wgmma_does_not_take_is_refused():
    from tritonforge_worker.compiled import _gluon_descriptor_type

    with pytest.raises(ValueError, match="fp64"):
        _gluon_descriptor_type("tensordesc<fp64[64, 64]>", {})
    assert _gluon_descriptor_type("*fp16", {}) == "*fp16"
    t = _gluon_descriptor_type("tensordesc<fp16[BM, 64]>", {"BM": 128})
    assert t.startswith("tensordesc<fp16[128, 64],NVMMASharedLayout(")


def _load(case):
    import importlib.util

    path = os.path.join(os.path.dirname(GOLDEN), "..", case, "expected.py")
    spec = importlib.util.spec_from_file_location(f"tf_gluon_{case}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("case,chain", [("autotuned", ["Autotuner"]), ("heuristics", ["Autotuner", "Heuristics"])])
def test_the_route_goes_under_autotune_and_heuristics(case, chain):
    """The decorators stay (the autotuner still chooses among its configurations) and the
    innermost kernel is the route, which they launch through `run`."""
    mod = _load(case)
    obj = mod.matmul_kernel
    for name in chain:
        assert type(obj).__name__ == name
        obj = obj.fn
    assert type(obj).__name__ == "_matmul_kernel_GluonRoute"
    assert type(obj.fn).__name__ in ("JITFunction", "InterpretedFunction")
    # A call the route does not fit (CPU tensors) says False and leaves it to the kernel.
    import torch

    a = torch.zeros(64, 64, dtype=torch.float16)
    assert mod._matmul_kernel_gluon_launch((1, 1), a, a, a, 64, 64, 64, 64, 64, 64,
                                           BLOCK_M=128, BLOCK_N=128, BLOCK_K=64) is False

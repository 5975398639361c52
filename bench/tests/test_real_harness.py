"""Each real task's harness (ours) on the CPU at its SMALL_CASE: make_inputs and the float64
reference run, the reference has the outputs the launcher returns (or writes in place), and
where the harness names a vendor op, that op agrees with the reference within the task's
tolerance. Needs torch; skipped without it. The kernels themselves are third-party and run on
the GPU (bench/run --suite real)."""

import pytest

from benchlib import real, suite, verify

try:
    import torch
    HAVE_TORCH = True
except Exception:
    HAVE_TORCH = False

pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")
MANIFEST = real.load_manifest()
NAMES = [k.name for k in MANIFEST.kernels]

# How many outputs each launcher hands back (a tuple's members, or the in-place inputs).
OUTPUTS = {"liger_cross_entropy": 4, "liger_rope": 2, "lightllm_rotary_emb": 2, "lmdeploy_rotary": 2,
           "lightllm_softmax_topk": 2, "linghe_topk": 2, "lightllm_grouped_topk": 2, "lightllm_mrope": 2,
           "lmdeploy_rms_norm": 2, "lmdeploy_rms_norm_quant": 3, "lmdeploy_noaux_tc_router": 2,
           "liger_fused_add_rms_norm": 2, "linghe_group_quant": 2, "linghe_moe_permute": 3,
           "linghe_cross_entropy": 3, "fla_fused_recurrent_gdn": 2, "mamba_rms_norm": 2, "fla_l2norm": 2, "liger_qwen2vl_mrope": 2}


def _harness(name):
    spec = real.load_real_spec(name, MANIFEST)
    h = suite.load_module(spec.harness, "harness")
    h.DEVICE = "cpu"
    return spec, h


@pytest.mark.parametrize("name", NAMES)
def test_reference_runs_on_the_small_case(name):
    spec, h = _harness(name)
    inputs = h.make_inputs(dict(h.SMALL_CASE), 0)
    refs = verify.reference_outputs(h, inputs, spec.reference_precision)
    assert len(refs) == OUTPUTS.get(name, 1)
    tensors = [r for r in refs if isinstance(r, torch.Tensor)]
    assert tensors, "at least one tensor output"
    for r in tensors:
        assert r.numel() > 0
        if r.is_floating_point():
            assert r.dtype == torch.float64, "floating outputs are computed in float64"
            assert bool(torch.isfinite(r).all())
    # Same seed, same inputs: the tool seeds each case.
    again = h.make_inputs(dict(h.SMALL_CASE), 0)
    for i, (a, b) in enumerate(zip(inputs, again)):
        if isinstance(a, torch.Tensor) and i not in spec.in_place:   # outputs may start uninitialised
            assert torch.equal(a.float() if a.dtype == torch.float8_e4m3fn else a,
                               b.float() if b.dtype == torch.float8_e4m3fn else b)


@pytest.mark.parametrize("name", [n for n in NAMES if hasattr(_harness(n)[1], "vendor")] if HAVE_TORCH else [])
def test_vendor_agrees_with_the_reference(name):
    spec, h = _harness(name)
    inputs = h.make_inputs(dict(h.SMALL_CASE), 0)
    refs = verify.reference_outputs(h, inputs, spec.reference_precision)
    work = verify.clone(inputs)
    out = h.vendor(*work)
    if out is None:
        out = [work[i] for i in spec.in_place]
    res = verify.compare(out, refs, spec.rtol, spec.atol)
    assert res["passed"], res


def test_reference_catches_a_wrong_output():
    # The check these harnesses feed is not vacuous: a perturbed output fails it.
    spec, h = _harness("lightllm_rmsnorm")
    inputs = h.make_inputs(dict(h.SMALL_CASE), 0)
    refs = verify.reference_outputs(h, inputs, spec.reference_precision)
    good = h.vendor(*inputs)
    assert verify.compare(good, refs, spec.rtol, spec.atol)["passed"]
    bad = good.clone()
    bad[2, 7] += 0.5
    res = verify.compare(bad, refs, spec.rtol, spec.atol)
    assert not res["passed"] and "first at [2, 7]" in res["reason"]

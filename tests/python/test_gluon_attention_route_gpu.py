"""gluon-attention's emitted routes on a Hopper GPU: each golden's routed launcher takes the
Gluon template (its plan cache holds a plan, not a refusal) and computes what torch's SDPA
computes, and what the kernel as written computes, within the suite's attention tolerance.
Skipped visibly without a CUDA GPU or off sm_90."""

import math
import os

import pytest

from test_gluon_attention_route import GOLDEN, _load

pytestmark = pytest.mark.gpu


def hopper():
    import torch

    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the Gluon attention targets sm_90 (wgmma, TMA)")
    return torch


def _taken(mod):
    plans = [v for k, v in vars(mod).items() if k.endswith("_attention_PLANS")][0]
    return [p for p in plans.values() if not isinstance(p, str)], [p for p in plans.values() if isinstance(p, str)]


@pytest.mark.parametrize("S", [128, 1000])
def test_gqa_route(S):
    torch = hopper()
    routed = _load(os.path.join(GOLDEN, "gqa_causal", "expected.py"), f"gqa_routed_{S}")
    plain = _load(os.path.join(GOLDEN, "gqa_causal", "input.py"), f"gqa_plain_{S}")
    g = torch.Generator(device="cuda").manual_seed(S)
    q = torch.randn(2, 8, S, 128, device="cuda", dtype=torch.float16, generator=g)
    k, v = (torch.randn(2, 2, S, 128, device="cuda", dtype=torch.float16, generator=g) for _ in range(2))
    out = routed.gqa_attention(q, k, v)
    taken, refused = _taken(routed)
    assert taken and not refused, refused
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float().repeat_interleave(4, 1),
                                                           v.float().repeat_interleave(4, 1), is_causal=True)
    assert torch.allclose(out.float(), ref, rtol=1e-2, atol=2e-3)
    assert torch.allclose(out.float(), plain.gqa_attention(q, k, v).float(), rtol=1e-2, atol=2e-3)


@pytest.mark.parametrize("causal", [True, False])
def test_flagged_route(causal):
    torch = hopper()
    routed = _load(os.path.join(GOLDEN, "causal_flag_masked_zeros", "expected.py"), f"flag_routed_{causal}")
    g = torch.Generator(device="cuda").manual_seed(7)
    q, k, v = (torch.randn(2, 4, 512, 64, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    out = routed.attention(q, k, v, 0.125, causal)
    taken, refused = _taken(routed)
    assert taken and not refused, refused
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                           scale=0.125)
    assert torch.allclose(out.float(), ref, rtol=1e-2, atol=2e-3)


def test_lse_route():
    torch = hopper()
    routed = _load(os.path.join(GOLDEN, "exp2_with_lse", "expected.py"), "lse_routed")
    g = torch.Generator(device="cuda").manual_seed(3)
    q, k, v = (torch.randn(2, 3, 300, 64, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    out, lse = routed.attention(q, k, v, 0.125)
    taken, refused = _taken(routed)
    assert taken and not refused, refused
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), scale=0.125)
    ref_lse = torch.logsumexp(0.125 * q.float() @ k.float().transpose(-1, -2), dim=-1) / math.log(2)
    assert torch.allclose(out.float(), ref, rtol=1e-2, atol=2e-3)
    assert torch.allclose(lse, ref_lse, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("causal", [True, False])
def test_block_pointer_route_with_lse(causal):
    torch = hopper()
    routed = _load(os.path.join(GOLDEN, "block_pointers_flag_lse", "expected.py"), f"bp_routed_{causal}")
    g = torch.Generator(device="cuda").manual_seed(11)
    q, k, v = (torch.randn(2, 4, 512, 64, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    out, lse = routed.attention(q, k, v, 0.125, causal)
    _routed_with_lse2(torch, routed, q, k, v, out, lse, causal)


def _routed_with_lse2(torch, routed, q, k, v, out, lse, causal, scale=0.125):
    """The route was taken, the output matches SDPA and the log-sum-exp (base 2) torch's."""
    taken, refused = _taken(routed)
    assert taken and not refused, refused
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                           scale=scale)
    scores = scale * q.float() @ k.float().transpose(-1, -2)
    S = q.shape[2]
    if causal:
        scores = scores.masked_fill(torch.ones(S, S, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
    assert torch.allclose(out.float(), ref, rtol=1e-2, atol=2e-3)
    assert torch.allclose(lse.reshape(scores.shape[:3]), torch.logsumexp(scores, dim=-1) / math.log(2),
                          rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("case,causal,S", [
    ("finite_fill_bounds", False, 1000),           # -1e9 on the raw scores instead of -inf
    ("finite_fill_additive_causal", True, 512),    # the tutorial's additive tl.where(mask, 0, -1.0e6)
    ("even_flags_branch_loads", False, 512),       # EVEN_M / EVEN_N choose plain loads...
    ("even_flags_branch_loads", False, 1000),      # ... or masked ones: each call routed by its form
])
def test_pointer_form_route(case, causal, S):
    """Forms of the tutorial's pointer kernel (launcher attention(q, k, v, sm_scale)): routed (any
    fill checked far below the scores, the form picked by the call's flags), equal to SDPA and
    to the kernel as written."""
    torch = hopper()
    routed = _load(os.path.join(GOLDEN, case, "expected.py"), f"{case}_routed_{S}")
    plain = _load(os.path.join(GOLDEN, case, "input.py"), f"{case}_plain_{S}")
    g = torch.Generator(device="cuda").manual_seed(S)
    q, k, v = (torch.randn(2, 4, S, 64, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    out = routed.attention(q, k, v, 0.125)
    taken, refused = _taken(routed)
    assert taken and not refused, refused
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                           scale=0.125)
    assert torch.allclose(out.float(), ref, rtol=1e-2, atol=2e-3)
    assert torch.allclose(out.float(), plain.attention(q, k, v, 0.125).float(), rtol=1e-2, atol=2e-3)


@pytest.mark.parametrize("case,seed", [
    ("stage_mode_helper_loop", 5),         # block pointers advanced in the helper
    ("descriptor_rows_helper", 11),        # tensor descriptors built in the kernel
    ("host_descriptors_stage_helper", 13),  # TensorDescriptor arguments built on the host
])
@pytest.mark.parametrize("causal", [False, True])
def test_stage_mode_helper_route(case, seed, causal):
    """The key loop in a helper called per stage: MODE=1 (non-causal, one helper call) and MODE=3
    (causal: the keys before the diagonal block, then the diagonal block masked) are both routed
    and match SDPA, the log-sum-exp (base 2) too; Q, K, V and O through block pointers, through
    descriptors made in the kernel and through descriptors passed in."""
    torch = hopper()
    routed = _load(os.path.join(GOLDEN, case, "expected.py"), f"{case}_routed_{causal}")
    g = torch.Generator(device="cuda").manual_seed(seed)
    q, k, v = (torch.randn(2, 4, 512, 64, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    out, lse = routed.attention(q, k, v, causal, 0.125)
    _routed_with_lse2(torch, routed, q, k, v, out, lse, causal)


@pytest.mark.parametrize("case,causal,S", [
    ("block_pointers_boundary_checks", False, 1000),  # boundary checks with zero padding: any length
    ("block_pointers_boundary_checks", True, 1000),
    ("block_pointers_boundary_checks", True, 512),
    ("normalized_accumulator", False, 512),           # the accumulator kept divided by the running sum
    ("normalized_accumulator", True, 512),
])
def test_launcher_route_matches_kernel(case, causal, S):
    """Kernels whose launcher is attention(q, k, v, sm_scale, causal): routed, matching SDPA and
    the kernel as written."""
    torch = hopper()
    routed = _load(os.path.join(GOLDEN, case, "expected.py"), f"{case}_routed_{causal}_{S}")
    plain = _load(os.path.join(GOLDEN, case, "input.py"), f"{case}_plain_{causal}_{S}")
    g = torch.Generator(device="cuda").manual_seed(S)
    q, k, v = (torch.randn(2, 4, S, 64, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    out = routed.attention(q, k, v, 0.125, causal)
    taken, refused = _taken(routed)
    assert taken and not refused, refused
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                           scale=0.125)
    assert torch.allclose(out.float(), ref, rtol=1e-2, atol=2e-3)
    assert torch.allclose(out.float(), plain.attention(q, k, v, 0.125, causal).float(), rtol=1e-2, atol=2e-3)

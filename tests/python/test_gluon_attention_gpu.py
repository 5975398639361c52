"""The Gluon attention template (src/transform/passes/templates/gluon_attention.py) on a Hopper
GPU: the Gluon route is taken (launch returns the launched kernel, not False) and computes what
SDPA computes, causal and not, grouped-query, fp16 and bf16, head sizes 16 to 256, sequences
its tiles do not divide, query and key lengths that differ, strided (B, S, H, D) views; a call
it does not fit (head size 96, fp32) says False. Skipped visibly without a CUDA GPU or off sm_90."""

import importlib.util
import os

import pytest

pytestmark = pytest.mark.gpu

TEMPLATE = os.path.join(os.path.dirname(__file__), "..", "..", "src", "transform", "passes", "templates",
                        "gluon_attention.py")


def load():
    spec = importlib.util.spec_from_file_location("tf_gluon_attention_template_gpu", TEMPLATE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def hopper():
    import torch

    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the Gluon attention targets sm_90 (wgmma, TMA)")
    return torch


CASES = [  # B, HQ, HKV, SQ, SK, D, causal, dtype, layout
    (2, 4, 4, 256, 256, 128, False, "float16", "bhsd"),
    (2, 4, 4, 1000, 1000, 128, True, "float16", "bhsd"),
    (1, 8, 2, 777, 777, 128, False, "bfloat16", "bhsd"),
    (2, 8, 2, 300, 300, 64, True, "float16", "bshd"),
    (1, 2, 2, 130, 515, 64, False, "float16", "bhsd"),
    (1, 3, 3, 64, 64, 32, True, "bfloat16", "bhsd"),
    (1, 2, 1, 1, 129, 128, False, "float16", "bhsd"),
    (1, 4, 2, 333, 333, 256, True, "bfloat16", "bhsd"),
    (1, 2, 2, 200, 200, 16, False, "float16", "bhsd"),
]


@pytest.mark.parametrize("B,HQ,HKV,SQ,SK,D,causal,dtype,layout", CASES)
def test_gluon_attention_matches_sdpa(B, HQ, HKV, SQ, SK, D, causal, dtype, layout):
    torch = hopper()
    mod = load()
    dt = getattr(torch, dtype)
    g = torch.Generator(device="cuda").manual_seed(SQ * 31 + SK)

    def make(heads, seq):
        if layout == "bshd":  # a (B, S, H, D) buffer seen as (B, H, S, D): strided, not contiguous
            return torch.randn(B, seq, heads, D, device="cuda", dtype=dt, generator=g).transpose(1, 2)
        return torch.randn(B, heads, seq, D, device="cuda", dtype=dt, generator=g)

    q, k, v = make(HQ, SQ), make(HKV, SK), make(HKV, SK)
    o = torch.full_like(q, float("nan"))
    scale = D ** -0.5
    assert mod.fits(q, k, v, o, causal) is None
    assert mod.launch(q, k, v, o, scale, causal) is not False
    torch.cuda.synchronize()
    kr = k.float().repeat_interleave(HQ // HKV, dim=1)
    vr = v.float().repeat_interleave(HQ // HKV, dim=1)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kr, vr, is_causal=causal, scale=scale)
    assert not torch.isnan(o).any()
    torch.testing.assert_close(o.float(), ref, rtol=2e-2, atol=2e-2 if dt == torch.bfloat16 else 4e-3)


def test_a_call_it_does_not_fit_says_false():
    torch = hopper()
    mod = load()
    q = torch.randn(1, 2, 64, 96, device="cuda", dtype=torch.float16)
    o = torch.empty_like(q)
    assert "head size" in mod.fits(q, q, q, o, False)
    assert mod.launch(q, q, q, o, 1.0, False) is False
    q32 = q.float()
    assert "dtype" in mod.fits(q32, q32, q32, q32.clone(), False)

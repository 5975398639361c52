"""The Gluon attention template (src/transform/passes/templates/gluon_attention.py) on a Hopper
GPU: the Gluon route is taken (launch returns the launched kernel, not False) and computes what
SDPA computes, causal and not, grouped-query, fp16 and bf16, head sizes 16 to 256, sequences
its tiles do not divide, query and key lengths that differ, strided (B, S, H, D) views; a call
it does not fit (head size 96, fp32) says False. Skipped visibly without a CUDA GPU or off sm_90."""

import pytest

from test_gluon_attention_template import load

pytestmark = pytest.mark.gpu


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


# The schedules (ping-pong, heavy first, persistent, three consumer groups up to a head size of
# 64), each on every case: the default (persistent without a causal mask), all on, one tile per
# program (the tile loop run once), three groups alone.
SCHEDULES = [{}, {"pingpong": True, "heavy_first": True, "persistent": True, "groups": 3}, {"persistent": False},
             {"groups": 3}]


@pytest.mark.parametrize("schedule", SCHEDULES, ids=["default", "all", "one-tile", "three-groups"])
@pytest.mark.parametrize("B,HQ,HKV,SQ,SK,D,causal,dtype,layout", CASES)
def test_gluon_attention_matches_sdpa(B, HQ, HKV, SQ, SK, D, causal, dtype, layout, schedule):
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
    assert mod.launch(q, k, v, o, scale, causal, **schedule) is not False
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


@pytest.mark.parametrize("causal", [False, True])
def test_launch_view_reads_a_kernels_own_addressing(causal):
    """launch_view() over flat (batch * heads, rows, head) buffers with padded rows, as a kernel
    addressing `base + bh * stride_bh + row * stride_seq + d` sees them; grouped-query heads."""
    torch = hopper()
    mod = load()
    B, HQ, HKV, S, D, pad = 2, 4, 2, 333, 64, 16
    g = torch.Generator(device="cuda").manual_seed(7)

    def flat(heads):  # rows of D + pad elements, the pad never read
        return torch.randn(B * heads, S, D + pad, device="cuda", dtype=torch.float16, generator=g)

    q, k, v = flat(HQ), flat(HKV), flat(HKV)
    o = torch.full((B * HQ, S, D + pad), float("nan"), device="cuda", dtype=torch.float16)
    row = D + pad
    q_st = (HQ * S * row, S * row, row)
    kv_st = (HKV * S * row, S * row, row)
    launched = mod.launch_view(q, k, v, o, B, HQ, HKV, S, S, D, [q_st, kv_st, kv_st, q_st], 0.125, causal)
    assert launched is not False
    torch.cuda.synchronize()
    view = lambda t, h: t[..., :D].reshape(B, h, S, D).float()  # noqa: E731
    kr = view(k, HKV).repeat_interleave(HQ // HKV, dim=1)
    vr = view(v, HKV).repeat_interleave(HQ // HKV, dim=1)
    ref = torch.nn.functional.scaled_dot_product_attention(view(q, HQ), kr, vr, is_causal=causal, scale=0.125)
    torch.testing.assert_close(view(o, HQ), ref, rtol=2e-2, atol=4e-3)
    assert torch.isnan(o[..., D:]).all()  # the padding is not written


def test_launch_view_refuses_a_stride_tma_cannot_take():
    torch = hopper()
    mod = load()
    q = torch.randn(1, 2, 64, 64, device="cuda", dtype=torch.float16)
    st = (2 * 64 * 64, 64 * 64, 64)
    bad = (2 * 64 * 64, 64 * 64, 60)  # rows of 120 bytes: not 16-byte aligned
    views = [(q, bad), (q, st), (q, st), (q, st)]
    assert "stride" in mod.refuse_view(torch.float16, 1, 2, 2, 64, 64, 64, False, views)
    assert mod.launch_view(q, q, q, q.clone(), 1, 2, 2, 64, 64, 64, [bad, st, st, st], 1.0, False) is False
    zero_heads = (2 * 64 * 64, 0, 64)  # a broadcast over two heads
    assert mod.refuse_view(torch.float16, 1, 2, 2, 64, 64, 64, False, [(q, st), (q, zero_heads), (q, st), (q, st)])


@pytest.mark.parametrize("causal,base", [(False, "e"), (True, 2)])
def test_log_sum_exp_output(causal, base):
    """lse[b, h, i] = log-sum-exp over the keys row i sees of sm_scale * q_i . k_j (base e or 2),
    beside the output, on a sequence the tiles do not divide."""
    import math

    torch = hopper()
    mod = load()
    B, H, S, D, scale = 2, 3, 333, 128, 0.1
    g = torch.Generator(device="cuda").manual_seed(11)
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.full((B, H, S), float("nan"), device="cuda", dtype=torch.float32)
    assert mod.launch(q, k, v, o, scale, causal, lse=lse, lse_base=base) is not False
    torch.cuda.synchronize()
    scores = (q.float() @ k.float().transpose(-1, -2)) * scale
    if causal:
        scores = scores.masked_fill(torch.ones(S, S, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
    ref = torch.logsumexp(scores, dim=-1)
    if base == 2:
        ref = ref / math.log(2)
    torch.testing.assert_close(lse, ref, rtol=1e-4, atol=1e-3)
    ref_o = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                             scale=scale)
    torch.testing.assert_close(o.float(), ref_o, rtol=2e-2, atol=4e-3)

"""The route gluon-attention emits, run on the CPU: it reads a kernel's own addressing for
every program of a launch's grid and describes it as the (batch, head, row) view the Gluon
template takes (plan_view), or refuses. The goldens' expected outputs are imported and their
launch helpers called with CPU tensors: the plan is computed (pure Python), then the template
refuses the CPU tensors, so the kernel as written would run."""

import importlib.util
import math
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GOLDEN = os.path.join(ROOT, "tests", "golden", "transform", "gluon-attention")


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def template():
    return _load(os.path.join(ROOT, "src", "transform", "passes", "templates", "gluon_attention.py"), "tmpl")


def test_gqa_kernel_plan_is_its_heads_and_groups():
    mod = _load(os.path.join(GOLDEN, "gqa_causal", "expected.py"), "gqa_expected")
    B, HQ, HKV, S, D = 2, 6, 2, 72, 64
    q = torch.zeros(B, HQ, S, D, dtype=torch.float16)
    k = torch.zeros(B, HKV, S, D, dtype=torch.float16)
    out = torch.empty_like(q)
    grid = (math.ceil(S / 32), B * HQ)
    launched = mod._gqa_attention_kernel_attention_launch(
        grid, q, k, k, out, S, 0.125, HQ, HQ // HKV, q.stride(1), k.stride(1), q.stride(2),
        HEAD_DIM=D, BLOCK_M=32, BLOCK_N=32)
    assert launched is False  # CPU tensors: the template refuses, the kernel as written runs
    (plan,) = mod._gqa_attention_kernel_attention_PLANS.values()
    assert plan == dict(batch=1, q_heads=B * HQ, kv_heads=B * HKV, seq_q=S, seq_k=S,
                        strides=[(0, S * D, D), (0, S * D, D), (0, S * D, D), (0, S * D, D)],
                        offsets=[0, 0, 0, 0])


def test_tutorial_form_plan_reads_batch_and_head_strides():
    mod = _load(os.path.join(GOLDEN, "exp2_folded_scale", "expected.py"), "exp2_expected")
    B, H, S, D = 2, 3, 100, 64
    # (B, S, H, D) storage seen as (B, H, S, D): heads strided by D, rows by H * D
    q = torch.zeros(B, S, H, D, dtype=torch.float16).transpose(1, 2)
    out = torch.zeros(B, S, H, D, dtype=torch.float16).transpose(1, 2)
    grid = (math.ceil(S / 64), B * H)
    st = lambda t: (t.stride(0), t.stride(1), t.stride(2))  # noqa: E731
    mod._attn_fwd_attention_launch(grid, q, q, q, out, 0.125, S, *st(q), *st(q), *st(q), *st(out), H,
                                   BLOCK_M=64, BLOCK_N=64, HEAD_DIM=D)
    (plan,) = mod._attn_fwd_attention_PLANS.values()
    assert plan["batch"] == B and plan["q_heads"] == H and plan["kv_heads"] == H
    assert plan["seq_q"] == S and plan["seq_k"] == S
    assert plan["strides"] == [(S * H * D, D, H * D)] * 4


def test_flagged_kernel_plans_each_form():
    mod = _load(os.path.join(GOLDEN, "causal_flag_masked_zeros", "expected.py"), "flag_expected")
    B, H, S, D = 1, 2, 128, 64
    q = torch.zeros(B, H, S, D, dtype=torch.float16)
    for causal in (True, False):
        mod._fwd_kernel_attention_launch((2, B * H), q, q, q, 0.125, q, q.stride(1), q.stride(2), q.stride(1),
                                         q.stride(2), q.stride(1), q.stride(2), q.stride(1), q.stride(2), S,
                                         BLOCK_M=64, BLOCK_DMODEL=D, BLOCK_N=64, IS_CAUSAL=causal)
    plans = mod._fwd_kernel_attention_PLANS
    assert len(plans) == 2  # one per value of IS_CAUSAL
    for key, plan in plans.items():
        assert plan["seq_q"] == S and plan["seq_k"] == S and plan["q_heads"] == B * H, (key, plan)


def test_log_sum_exp_store_is_planned_with_its_strides():
    mod = _load(os.path.join(GOLDEN, "exp2_with_lse", "expected.py"), "lse_expected")
    B, H, S, D = 2, 3, 128, 64
    q = torch.zeros(B, H, S, D, dtype=torch.float16)
    st = lambda t: (t.stride(0), t.stride(1), t.stride(2))  # noqa: E731
    for lse_dtype, planned in ((torch.float16, False), (torch.float32, True)):
        lse = torch.zeros(B, H, S, dtype=lse_dtype)
        mod._attn_fwd_attention_launch((2, B * H), q, q, q, q, lse, 0.125, S, *st(q), *st(q), *st(q), *st(q), H,
                                       BLOCK_M=64, BLOCK_N=64, HEAD_DIM=D)
        assert len(mod._attn_fwd_attention_PLANS) == int(planned)  # an fp16 log-sum-exp is refused first
    (plan,) = mod._attn_fwd_attention_PLANS.values()
    assert plan["batch"] * plan["q_heads"] == B * H
    assert plan["strides"][4][1:] == (S, 1) and plan["offsets"][4] == 0


def test_block_pointer_kernel_plans_each_form_with_lse():
    mod = _load(os.path.join(GOLDEN, "block_pointers_flag_lse", "expected.py"), "bp_expected")
    B, H, S, D = 2, 2, 128, 64
    q = torch.zeros(B, H, S, D, dtype=torch.float16)
    lse = torch.zeros(B * H, S, dtype=torch.float32)
    for causal in (True, False):
        mod._flash_fwd_attention_launch((2, B * H, 1), q, q, q, 0.125, lse, q, q.stride(1), q.stride(2), q.stride(3),
                                        q.stride(2), q.stride(3), q.stride(2), q.stride(3), q.stride(2), q.stride(3),
                                        S, B * H * S, BLOCK_M=64, BLOCK_DMODEL=D, BLOCK_N=64, IS_CAUSAL=causal)
    plans = list(mod._flash_fwd_attention_PLANS.values())
    assert len(plans) == 2 and all(not isinstance(p, str) for p in plans), plans
    for plan in plans:
        assert plan["batch"] * plan["q_heads"] == B * H and plan["seq_q"] == S and plan["seq_k"] == S
        assert plan["strides"][4][1:] == (S, 1)


def _where(B, H, HKV, S, BM, causal_hi=False, rows_of=None):
    """A kernel's addressing as plan_view sees it: (B, H, S, D) contiguous, D = 16."""
    D = 16

    def where(p, j):
        r = p[0] * BM if rows_of is None else rows_of(p)
        bh = p[1]
        b, h = bh // H, bh % H
        kvh = b * HKV + h // (H // HKV)
        hi = min(r + BM, S) if causal_hi else S
        q = o = bh * S * D + r * D
        k = v = kvh * S * D + j * D
        return ((r,), q, o, k, v, hi, S, S, S, S, S, None)
    return where, (D, D, D, D)


def test_plan_view_gqa_and_causal_loop_end():
    t = template()
    where, rows = _where(2, 8, 2, 70, 32, causal_hi=True)
    plan = t.plan_view(where, (3, 16), 32, 16, rows, True)
    assert plan["q_heads"] == 16 and plan["kv_heads"] == 4 and plan["seq_q"] == 70


def test_plan_view_refuses_what_is_not_one_problem_per_pair():
    t = template()
    # a non-causal loop that stops at the diagonal misses keys
    where, rows = _where(1, 2, 2, 64, 32, causal_hi=True)
    assert isinstance(t.plan_view(where, (2, 2), 32, 32, rows, False), str)
    # two programs computing the same rows, another none
    where, rows = _where(1, 2, 2, 64, 32, rows_of=lambda p: 0)
    assert isinstance(t.plan_view(where, (2, 2), 32, 32, rows, False), str)
    # K advancing by other rows than the tile's keys
    where, rows = _where(1, 2, 2, 64, 32)
    assert isinstance(t.plan_view(where, (2, 2), 32, 32, (16, 32, 16, 16), False), str)


@pytest.mark.parametrize("case", ["finite_fill_bounds", "finite_fill_additive_causal"])
def test_finite_mask_fill_is_checked_against_the_scale_on_each_call(case, monkeypatch):
    """A mask that gives scores -1e9 or -1e6 instead of -inf: the route launches the template
    only while that value, in the exponent, lies at least 1e4 below zero (then it weighs
    exactly nothing, as -inf does); a scale that brings it near the scores keeps the kernel as
    written."""
    mod = _load(os.path.join(GOLDEN, case, "expected.py"), case + "_expected")
    launched = []
    monkeypatch.setattr(mod, "_attn_fwd_attention_launch_view", lambda *a, **k: launched.append(a) or "launched")
    B, H, S, D = 1, 2, 128, 64
    q = torch.zeros(B, H, S, D, dtype=torch.float16)
    st = (q.stride(0), q.stride(1), q.stride(2))

    def call(sm_scale):
        return mod._attn_fwd_attention_launch((2, B * H), q, q, q, q, sm_scale, S, *st, *st, *st, *st, H,
                                              BLOCK_M=64, BLOCK_N=64, HEAD_DIM=D)

    assert call(0.125) == "launched"
    if case == "finite_fill_bounds":
        # -1e9 on the raw scores, scaled with them: -1e9 * 1e-6 = -1000 nats would weigh
        # exp(-1000 - max) only beside scores near -1000, but the route does not bet on it
        assert call(1e-6) is False
        assert len(launched) == 1
    else:
        # -1e6 added after the scale: -1e6 / log2(e) nats whatever the scale
        assert call(1e-6) == "launched"
        assert len(launched) == 2


def test_flags_that_choose_loads_pick_their_form_per_call():
    """EVEN_M / EVEN_N choose masked or plain loads (each written in both branches): one reading
    per value; each call's flags pick the plan of its form."""
    mod = _load(os.path.join(GOLDEN, "even_flags_branch_loads", "expected.py"), "even_expected")
    B, H, D = 1, 2, 64
    for S in (128, 100):
        q = torch.zeros(B, H, S, D, dtype=torch.float16)
        st = (q.stride(0), q.stride(1), q.stride(2))
        even = S % 64 == 0
        mod._attn_fwd_attention_launch((math.ceil(S / 64), B * H), q, q, q, q, 0.125, S, *st, *st, *st, *st, H,
                                       BLOCK_M=64, BLOCK_N=64, HEAD_DIM=D, EVEN_M=even, EVEN_N=even)
    plans = mod._attn_fwd_attention_PLANS
    assert len(plans) == 2
    for key, plan in plans.items():
        assert not isinstance(plan, str), plan
        assert plan["seq_q"] == plan["seq_k"] and plan["seq_q"] in (128, 100)
        assert plan["q_heads"] == B * H


def test_stage_mode_helper_kernel_plans_both_modes():
    """The key loop in a helper called per stage (MODE & 1, MODE & 2, the helper's PHASE = 4 -
    MODE): MODE=1 (every key in one helper call) and MODE=3 (the keys before the diagonal block
    unmasked, then the diagonal block masked: two loops, one softmax) are both read and planned,
    the (batch, head) base folded into the block pointers' bases; MODE=2 (the diagonal block
    alone) is not attention over the keys, so its calls go to the kernel as written."""
    mod = _load(os.path.join(GOLDEN, "stage_mode_helper_loop", "expected.py"), "stage_expected")
    B, H, S, D = 2, 3, 256, 64
    q = torch.zeros(B, H, S, D, dtype=torch.float16)
    lse = torch.zeros(B, H, S, dtype=torch.float32)

    def launch(mode):
        return mod._staged_attention_attention_launch((S // 128, B * H, 1), q, q, q, 0.125, lse, q,
                                                      *q.stride(), *q.stride(), *q.stride(), *q.stride(), H, S,
                                                      DIM=D, ROWS=128, KEYS=64, MODE=mode)

    assert launch(2) is False and not mod._staged_attention_attention_PLANS  # no form: no plan
    for mode in (1, 3):
        assert launch(mode) is False  # CPU tensors: the template refuses after the plan
    plans = list(mod._staged_attention_attention_PLANS.values())
    assert len(plans) == 2 and not any(isinstance(p, str) for p in plans), plans
    for plan in plans:
        # contiguous heads: (B, H) pairs read as one batch of B * H heads, the same view
        assert plan["batch"] * plan["q_heads"] == B * H and plan["q_heads"] == plan["kv_heads"]
        assert (plan["seq_q"], plan["seq_k"]) == (S, S)
        assert plan["strides"][0][1:] == (S * D, D) and plan["strides"][4][1:] == (S, 1)
    # 64-row programs: the first loop ends at each program's first row, the plan holds
    mod._staged_attention_attention_PLANS.clear()
    launch_rows = mod._staged_attention_attention_launch((S // 64, B * H, 1), q, q, q, 0.125, lse, q,
                                                         *q.stride(), *q.stride(), *q.stride(), *q.stride(), H, S,
                                                         DIM=D, ROWS=64, KEYS=64, MODE=3)
    assert launch_rows is False
    plans = list(mod._staged_attention_attention_PLANS.values())
    assert len(plans) == 1 and not isinstance(plans[0], str) and plans[0]["seq_k"] == S, plans


def test_descriptor_kernel_plans_inside_its_descriptors():
    """Tensor descriptors built in the kernel over every (batch, head)'s rows stacked, the key
    loop in a helper advancing its own row offsets: both modes planned when every tile lies
    inside its descriptor; a sequence the tiles do not divide makes the last head's tiles cross
    the descriptor's end (the kernel zero-fills and clips them): refused, the kernel runs."""
    mod = _load(os.path.join(GOLDEN, "descriptor_rows_helper", "expected.py"), "descriptor_expected")
    Z, H, D = 2, 3, 64
    for S, planned in ((256, True), (200, False)):
        q = torch.zeros(Z, H, S, D, dtype=torch.float16)
        lse = torch.zeros(Z, H, S, dtype=torch.float32)
        for mode in (1, 3):
            mod._desc_attention_attention_PLANS.clear()
            launched = mod._desc_attention_attention_launch(((S + 127) // 128, Z * H, 1), 0.125, lse, Z, H, q, q, q,
                                                             q, S, D=D, BM=128, BN=64, MODE=mode)
            assert launched is False  # CPU tensors: the template refuses after the plan
            (plan,) = mod._desc_attention_attention_PLANS.values()
            if planned:
                assert not isinstance(plan, str), plan
                assert plan["batch"] * plan["q_heads"] == Z * H and (plan["seq_q"], plan["seq_k"]) == (S, S)
                assert plan["strides"][0][1:] == (S * D, D) and plan["strides"][4][1:] == (S, 1)
            else:
                assert plan == "a tensor descriptor's tile crosses its shape (rows the kernel zero-fills or clips)"


def test_unmasked_keys_past_a_first_row_are_refused():
    """Two key loops continuing one softmax, the causal mask only in the second: read, but when
    the first (unmasked) loop runs past a program's first query row, those rows would see later
    keys; the route's plan refuses such launches (MODE=3) and still plans the one-loop MODE=1."""
    mod = _load(os.path.join(GOLDEN, "causal_first_loop_past_row", "expected.py"), "past_row_expected")
    B, H, S, D = 1, 2, 256, 64
    q = torch.zeros(B, H, S, D, dtype=torch.float16)
    lse = torch.zeros(B, H, S, dtype=torch.float32)
    plans = mod._staged_attention_attention_PLANS
    for mode, planned in ((3, False), (1, True)):
        plans.clear()
        assert mod._staged_attention_attention_launch((S // 128, B * H, 1), q, q, q, 0.125, lse, q, *q.stride(),
                                                      *q.stride(), *q.stride(), *q.stride(), H, S, DIM=D, ROWS=128,
                                                      KEYS=64, MODE=mode) is False
        (plan,) = plans.values()
        if planned:
            assert not isinstance(plan, str), plan
        else:
            assert plan == "the kernel's masks disagree on a program's first query row"


def test_host_descriptor_kernel_plans_from_its_arguments():
    """TensorDescriptor arguments (built on the host over (batch, head)'s rows stacked): the plan
    reads each call's descriptor strides and shapes, so a call with other shapes gets a plan of
    its own; a descriptor whose block shape is not the one the kernel was read with, or other
    tile constexprs, and the kernel as written runs (no plan)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    mod = _load(os.path.join(GOLDEN, "host_descriptors_stage_helper", "expected.py"), "host_desc_expected")
    plans = mod._host_desc_attention_attention_PLANS
    Z, H, D = 2, 3, 64

    def launch(S, mode, block_q=128, BM=128):
        q = torch.zeros(Z, H, S, D, dtype=torch.float16)
        lse = torch.zeros(Z, H, S, dtype=torch.float32)

        def desc(rows):
            return TensorDescriptor(q, shape=[Z * H * S, D], strides=[D, 1], block_shape=[rows, D])

        return mod._host_desc_attention_attention_launch(((S + BM - 1) // BM, Z * H, 1), 0.125, lse, Z, H,
                                                          desc(block_q), desc(64), desc(64), desc(block_q), S, D=D,
                                                          BM=BM, BN=64, LOW=False, MODE=mode)

    for mode in (1, 3):
        plans.clear()
        assert launch(256, mode) is False  # CPU tensors: the template refuses after the plan
        (plan,) = plans.values()
        assert not isinstance(plan, str), plan
        assert plan["batch"] * plan["q_heads"] == Z * H and (plan["seq_q"], plan["seq_k"]) == (256, 256)
        assert plan["strides"][0][1:] == (256 * D, D)
    plans.clear()
    launch(256, 1)
    launch(512, 1)  # same integers but the sequence: a plan of its own
    assert sorted(p["seq_q"] for p in plans.values()) == [256, 512]
    plans.clear()
    launch(200, 1)
    assert list(plans.values()) == ["a tensor descriptor's tile crosses its shape (rows the kernel zero-fills or clips)"]
    plans.clear()
    assert launch(256, 1, block_q=64) is False and not plans  # another block shape than the one read
    assert launch(256, 1, block_q=64, BM=64) is False and not plans  # other tiles than the ones read


def test_boundary_checked_block_pointers_plan_any_length():
    """Block pointers per (batch, head) with boundary checks and zero padding: the checks are
    the tiles' masks (the rows and keys below the sequence), so a sequence the tiles do not
    divide is planned too, causal and not."""
    mod = _load(os.path.join(GOLDEN, "block_pointers_boundary_checks", "expected.py"), "checked_expected")
    plans = mod._checked_attention_attention_PLANS
    B, H, D = 2, 3, 64
    for S in (256, 200):
        for causal in (False, True):
            q = torch.zeros(B, H, S, D, dtype=torch.float16)
            plans.clear()
            assert mod._checked_attention_attention_launch(((S + 63) // 64, B * H), q, q, q, q, 0.125,
                                                           *q.stride()[:3], H, S, D=D, BM=64, BN=64,
                                                           CAUSAL=causal) is False
            (plan,) = plans.values()
            assert not isinstance(plan, str), plan
            assert (plan["seq_q"], plan["seq_k"]) == (S, S) and plan["batch"] * plan["q_heads"] == B * H


def test_normalized_form_plans_unless_a_block_row_is_all_masked():
    """The normalized form (the accumulator kept divided by the running sum): planned causal and
    not with 64-row programs and 64-key blocks; causal with 128-row programs, the last block a
    program visits starts past its first row, whose rows there are all masked (NaN in the
    kernel, which divides by that block's own maximum): refused, the kernel runs."""
    mod = _load(os.path.join(GOLDEN, "normalized_accumulator", "expected.py"), "normalized_expected")
    plans = mod._normalized_attention_attention_PLANS
    B, H, S, D = 2, 3, 256, 64
    q = torch.zeros(B, H, S, D, dtype=torch.float16)
    for BM, causal, planned in ((64, False, True), (64, True, True), (128, False, True), (128, True, False)):
        plans.clear()
        assert mod._normalized_attention_attention_launch((S // BM, B * H), q, q, q, q, 0.125, *q.stride()[:3], H, S,
                                                          D=D, BM=BM, BN=64, CAUSAL=causal) is False
        (plan,) = plans.values()
        assert isinstance(plan, str) != planned, plan

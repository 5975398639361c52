"""The worker's run and warm ops on a GPU: verification catches planted faults, timing
reports a median and spread. Skipped visibly without a CUDA GPU."""

import os
import textwrap

import pytest

from worker_client import ROOT, Worker

pytestmark = pytest.mark.gpu

GOOD = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    def add(x, y):
        out = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
        return out
''')

HARNESS = textwrap.dedent('''
    import torch

    def make_inputs(case, seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        n = case["n"]
        return (torch.randn(n, device="cuda", generator=g), torch.randn(n, device="cuda", generator=g))

    def reference(x, y):
        return x + y
''')


def variant(tmp_path, name, body_subst=None, block=1024):
    text = GOOD.replace("BLOCK=BLOCK)", f"BLOCK={block})").replace("cdiv(n, BLOCK)", f"cdiv(n, {block})")
    for old, new in (body_subst or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return {"path": str(path), "module_name": f"tfv_{name}"}


@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.close()


@pytest.fixture
def harness(tmp_path):
    p = tmp_path / "harness.py"
    p.write_text(HARNESS)
    return str(p)


def run(worker, harness, v, n=100003, seeds=(0, 1)):
    return worker.call("run", variant=v, launcher="add", harness=harness, case={"n": n}, seeds=list(seeds),
                       check={"rtol": 1e-6, "atol": 1e-6}, timing={"budget_ms": 50})


def test_correct_kernel_passes_and_is_timed(worker, harness, tmp_path):
    r = run(worker, harness, variant(tmp_path, "good"))
    assert r["ok"], r
    res = r["result"]
    assert res["status"] == "ok", res
    t = res["timing"]
    assert t["median_ms"] > 0 and t["q1_ms"] <= t["median_ms"] <= t["q3_ms"] and t["reps"] >= 10
    assert res["kernels"][0]["name"] == "add_kernel"
    assert res["kernels"][0]["signature"]["x"] == "*fp32"


@pytest.mark.parametrize("name,subst,needle", [
    ("one_wrong", {"tl.load(y + offs, mask=m), mask=m)":
                   "tl.load(y + offs, mask=m) + tl.where(offs == 777, 1.0, 0.0), mask=m)"}, "1 of"),
    ("tail_unwritten", {"m = offs < n": "m = offs < (n - n % 1024)"}, "NaN"),
    ("writes_past_end", {"tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)":
                         "tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)\n"
                         "    tl.store(out + n + offs % 4, 0.0, mask=offs < 4)"}, "outside an output"),
    ("modifies_input", {"tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)":
                        "tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)\n"
                        "    tl.store(x + offs, 0.0, mask=m)"}, "modified in place"),
])
def test_planted_faults_are_wrong_results(worker, harness, tmp_path, name, subst, needle):
    r = run(worker, harness, variant(tmp_path, name, subst))
    assert r["ok"], r
    res = r["result"]
    assert res["status"] == "wrong-result", res
    if needle:
        assert needle in res["verify"]["reason"], res["verify"]


def test_output_cached_across_seeds_is_caught(worker, harness, tmp_path):
    subst = {"def add(x, y):\n    out = torch.empty_like(x)":
             "_CACHE = []\n\ndef add(x, y):\n    if _CACHE:\n        return _CACHE[0]\n    out = torch.empty_like(x)\n"
             "    _CACHE.append(out)"}
    r = run(worker, harness, variant(tmp_path, "cached", subst))
    res = r["result"]
    assert res["status"] == "wrong-result", res
    assert res["verify"]["failed_seed"] == 1


def test_compile_error_is_a_status(worker, harness, tmp_path):
    r = run(worker, harness, variant(tmp_path, "bad_block", block=1000))
    res = r["result"]
    assert res["status"] == "compile-error", res


def test_in_place_index_beyond_the_inputs_is_a_task_error(worker, harness, tmp_path):
    # make_inputs returns 2 inputs: index 5 names none. The reply is a TaskError naming the
    # key, which the core reports as bad input of the task file (not a kernel failure).
    r = worker.call("run", variant=variant(tmp_path, "in_place"), launcher="add", harness=harness, case={"n": 1000},
                    seeds=[0], check={"in_place": [0, 5]}, timing={"budget_ms": 10})
    assert not r["ok"], r
    assert r["error"]["type"] == "TaskError"
    assert r["error"]["message"] == ("check.in_place[1] = 5 names no input: make_inputs returned 2 inputs "
                                     "(indices 0 to 1)")
    assert r["error"]["data"] == {"key": "check.in_place[1]", "index": 5, "inputs": 2}
    # The worker keeps serving.
    assert worker.call("echo", x=1)["ok"]


SQUARE = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def _fwd(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n)
        tl.store(y + offs, v * v, mask=offs < n)

    @triton.jit
    def _bwd(x, dy, dx, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n)
        g = tl.load(dy + offs, mask=offs < n)
        tl.store(dx + offs, 2 * v * g, mask=offs < n)

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.empty_like(x)
            _fwd[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
            ctx.save_for_backward(x)
            return y

        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensors
            dx = torch.empty_like(x)
            _bwd[(triton.cdiv(x.numel(), 256),)](x, dy.contiguous(), dx, x.numel(), BLOCK=256)
            return dx

    square = Square.apply
''')

SQUARE_HARNESS = textwrap.dedent('''
    import torch

    def make_inputs(case, seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        return (torch.randn(case["n"], device="cuda", generator=g),)

    def reference(x):
        return x * x
''')


@pytest.mark.parametrize("name,subst,status", [
    ("as_written", {}, "ok"),
    ("wrong_gradient", {"2 * v * g": "2 * v * g + tl.where(offs == 5, 1.0, 0.0)"}, "wrong-result"),
    ("forward_wrong_only", {"v * v, mask": "v * v + tl.where(offs == 9, 1.0, 0.0), mask"}, "wrong-result"),
    # Right, computed over its output gradient: the reference must use its own copy of it.
    ("in_place_over_dy", {"dx = torch.empty_like(x)\n": "dy = dy.contiguous()\n        dx = dy\n"}, "ok"),
])
def test_a_backward_task_checks_and_times_the_gradients(worker, tmp_path, name, subst, status):
    text = SQUARE
    for old, new in subst.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    h = tmp_path / "square_harness.py"
    h.write_text(SQUARE_HARNESS)
    r = worker.call("run", variant={"path": str(path), "module_name": f"tfv_sq_{name}"}, launcher="square",
                    harness=str(h), case={"n": 100003}, seeds=[0, 1], check={}, timing={"budget_ms": 50},
                    direction="backward")
    assert r["ok"], r
    res = r["result"]
    assert res["status"] == status, res
    if status == "ok":
        assert res["timing"]["median_ms"] > 0
        assert [k["name"] for k in res["kernels"]] == ["_bwd"]


def test_timeline_splits_the_launchers_gpu_time(worker, harness, tmp_path):
    """A launcher that adds a torch reduction and a host sync after its kernel: the timeline
    asked for shows the Triton kernel, the reduction outside it, and the sync."""
    v = variant(tmp_path, "glue", {"    return out\n": "    (out.abs().max() > 1e9).item()\n    return out\n"})
    r = worker.call("run", variant=v, launcher="add", harness=harness, case={"n": 1 << 22}, seeds=[0],
                    check={"rtol": 1e-6, "atol": 1e-6}, timing={"enabled": False}, timeline=True)
    assert r["ok"], r
    res = r["result"]
    assert res["status"] == "ok", res
    t = res["timeline"]
    assert t["triton_ms"] > 0 and t["triton_launches"] == 1, t
    assert t["other_ms"] > 0 and t["outside"], t
    assert t["host_syncs"] >= 1, t
    assert abs(t["gpu_ms"] - (t["triton_ms"] + t["other_ms"] + t["copy_ms"])) < 1e-6, t
    # Not asked for: none.
    r = worker.call("run", variant=v, launcher="add", harness=harness, case={"n": 4096}, seeds=[0],
                    check={"rtol": 1e-6, "atol": 1e-6}, timing={"enabled": False})
    assert "timeline" not in r["result"], r["result"]


def test_warm_compiles_an_autotune_list_in_shares(worker, harness, tmp_path):
    """A compile worker's warm compiles each configuration of an @triton.autotune list once (no
    benchmark loop around it), only its share of the list when asked, and leaves the
    autotuner to choose for real when the launcher is then measured."""
    text = GOOD.replace("@triton.jit\n", "@triton.autotune(configs=[triton.Config({'BLOCK': b}) for b in (128, 256, 512, 1024)],\n"
                        "                 key=['n'])\n@triton.jit\n", 1)
    text = text.replace("add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)",
                        "add_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, out, n)")
    assert "@triton.autotune(" in text and "META['BLOCK']" in text
    path = tmp_path / "autotuned.py"
    path.write_text(text)
    v = {"path": str(path), "module_name": "tfv_autotuned"}
    shares = []
    for i in range(2):
        r = worker.call("warm", variant=v, launcher="add", harness=harness, cases=[{"n": 100003}],
                        autotune_part=[i, 2])
        assert r["ok"] and r["result"]["status"] == "ok", r
        kernels = r["result"]["kernels"]
        assert all(k["launches"] <= 2 for k in kernels), kernels
        shares.append(sorted(k["constexprs"]["BLOCK"] for k in kernels))
    assert shares == [[128, 512], [256, 1024]]
    r = run(worker, harness, v)
    assert r["ok"] and r["result"]["status"] == "ok", r
    assert r["result"]["timing"]["median_ms"] > 0

"""The rules of backward tasks (python/tritonforge_worker/backward.py) on the CPU, with
autograd Functions written in torch: which inputs get gradients, what a launcher without a
gradient gets told, that a correct backward matches the reference gradients and a planted
wrong one does not (the comparison is the worker's own)."""

import types

import pytest

torch = pytest.importorskip("torch")

from tritonforge_worker import backward as bw  # noqa: E402
from tritonforge_worker.errors import TaskError  # noqa: E402
from tritonforge_worker.runner import _compare  # noqa: E402


class Scale(torch.autograd.Function):
    """y = w * x**2 (w a vector broadcast over rows); backward as written, or planted wrong."""

    planted = 0.0

    @staticmethod
    def forward(ctx, x, w, n):
        ctx.save_for_backward(x, w)
        return w * x * x

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return 2 * w * x * g + Scale.planted, (x * x * g).sum(0), None


def harness(**extra):
    def reference(x, w, n):
        return w * x * x
    return types.SimpleNamespace(reference=reference, **extra)


def inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(8, 16, generator=g), torch.randn(16, generator=g), 16)


def check(launcher, h, seed=0):
    ins = inputs(seed)
    idx = bw.grad_indices(h, {}, ins)
    leaves, outs = bw.forward(launcher, list(ins), idx)
    grads = bw.grad_outputs(h, {}, seed, outs)
    got = bw.gradients(outs, leaves, idx, grads, retain_graph=True)
    refs = bw.reference_gradients(h, ins, idx, grads)
    return _compare(got, refs)


def test_every_floating_tensor_gets_a_gradient_unless_the_harness_names_them():
    ins = inputs()
    assert bw.grad_indices(harness(), {}, ins) == [0, 1]
    assert bw.grad_indices(harness(grad_inputs=lambda case: [0]), {}, ins) == [0]
    for bad in ([2], [5], [True], ["x"]):
        with pytest.raises(TaskError, match="names no floating-point tensor input"):
            bw.grad_indices(harness(grad_inputs=lambda case, bad=bad: bad), {}, ins)
    with pytest.raises(TaskError, match="no input is a floating-point tensor"):
        bw.grad_indices(harness(), {}, (torch.arange(4), 3))


def test_a_correct_backward_matches_and_a_planted_fault_is_caught():
    Scale.planted = 0.0
    passed, details = check(Scale.apply, harness())
    assert passed, details
    Scale.planted = 1e-2
    try:
        passed, details = check(Scale.apply, harness())
    finally:
        Scale.planted = 0.0
    assert not passed
    assert "output 0" in details["reason"]


def test_reference_backward_replaces_autograd_through_the_reference():
    def reference_backward(grads, x, w, n):
        (g,) = grads
        return 2 * w * x * g, (x * x * g).sum(0)

    passed, details = check(Scale.apply, harness(reference_backward=reference_backward))
    assert passed, details
    with pytest.raises(TaskError, match="returned 1 gradients for 2"):
        check(Scale.apply, harness(reference_backward=lambda grads, x, w, n: [x]))


def test_a_launcher_whose_outputs_carry_no_gradient_is_a_task_error():
    def no_autograd(x, w, n):  # a kernel writing into torch.empty: no grad_fn
        return torch.empty_like(x).copy_((w * x * x).detach())

    with pytest.raises(TaskError, match="no output of the launcher carries a gradient"):
        check(no_autograd, harness())


def test_output_gradients_are_seeded_and_checked_against_the_outputs():
    outs = [torch.zeros(4, 5), torch.zeros(3)]
    a, b = bw.grad_outputs(harness(), {}, 1, outs), bw.grad_outputs(harness(), {}, 1, outs)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a[0], bw.grad_outputs(harness(), {}, 2, outs)[0])
    with pytest.raises(TaskError, match="one tensor per output"):
        bw.grad_outputs(harness(grad_outputs=lambda case, seed, outs: [torch.ones(4, 5)]), {}, 1, outs)


def test_the_workers_backward_run_checks_forward_then_gradients(monkeypatch):
    """runner._run_backward end to end on the CPU: the GPU waits are no-ops and a recorded
    launch stands in for a Triton kernel. A backward working in place over its output gradient
    passes (the reference uses a copy); a planted gradient fault and a forward fault fail with
    their reasons."""
    import contextlib

    from tritonforge_worker import runner

    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    monkeypatch.setattr(runner, "_wait_gpu", lambda *a, **k: None)

    @contextlib.contextmanager
    def recording(warm_only=False):
        yield ["a launch"]

    monkeypatch.setattr(runner, "_recording", recording)
    monkeypatch.setattr(runner, "_summarize_launches", lambda rec, asm=None: [{"name": "fake"}])

    class Sq(torch.autograd.Function):
        planted = 0.0

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g.mul_(2 * x) + Sq.planted

    module = types.SimpleNamespace(
        make_inputs=lambda case, seed: (torch.randn(64, generator=torch.Generator().manual_seed(seed)),),
        reference=lambda x: x * x)

    class Harness:
        def __init__(self):
            self.module = module

        def make_inputs(self, case, seed):
            return module.make_inputs(case, seed)

        def work(self, case):
            return {}

    args = {"case": {"n": 64}, "seeds": [0, 1], "check": {}, "timing": {"enabled": False}}
    r = runner._run_backward(args, Harness(), "/nonexistent/ok.py", Sq.apply)
    assert r["status"] == "ok", r
    assert r["verify"]["passed"]
    Sq.planted = 1e-2
    r = runner._run_backward(args, Harness(), "/nonexistent/grad.py", Sq.apply)
    assert r["status"] == "wrong-result"
    assert r["verify"]["reason"].startswith("gradient output 0")
    Sq.planted = 0.0
    r = runner._run_backward(args, Harness(), "/nonexistent/fwd.py", lambda x: Sq.apply(x) + 1e-2)
    assert r["status"] == "wrong-result"
    assert r["verify"]["reason"].startswith("forward output 0")

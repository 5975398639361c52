"""Backward tasks (direction = "backward"): what is measured and checked is the gradient of
the launcher's floating outputs with respect to its inputs, computed by the backward methods of
the torch.autograd.Functions it calls (whose kernels are the ones tuned).

The harness may define:
  grad_inputs(case)                    -> indices of the inputs that get gradients
                                          (default: every floating-point tensor input)
  grad_outputs(case, seed, outputs)    -> the output gradients (default: seeded normal noise)
  reference_backward(grad_outputs, *inputs) -> the reference gradients of the grad_inputs
                                          (default: autograd through `reference`, in float64
                                          unless the task asks for the inputs' precision)
Kept apart from runner.py: these need torch only, so that their rules are tested on the CPU.
"""

from .errors import TaskError


def _float_tensor(x):
    import torch
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def grad_indices(harness_module, case, inputs):
    fn = getattr(harness_module, "grad_inputs", None)
    if fn is None:
        idx = [i for i, x in enumerate(inputs) if _float_tensor(x)]
    else:
        idx = list(fn(case))
        for pos, i in enumerate(idx):
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(inputs) or not _float_tensor(inputs[i]):
                err = TaskError(f"grad_inputs(case)[{pos}] = {i!r} names no floating-point tensor input "
                                f"(make_inputs returned {len(inputs)} inputs)")
                err.tf_data = {"key": "direction"}
                raise err
    if not idx:
        err = TaskError("direction = \"backward\", but no input is a floating-point tensor to take gradients of")
        err.tf_data = {"key": "direction"}
        raise err
    return idx


def leaves(inputs, idx):
    """A copy of the inputs whose `idx` entries are fresh leaves that require gradients."""
    work = list(inputs)
    for i in idx:
        work[i] = inputs[i].detach().clone().requires_grad_(True)
    return work


def differentiable_outputs(out):
    import torch
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]


def forward(fn, inputs, idx, what="the launcher", everything=None):
    """Runs `fn` on leaf copies of the inputs with autograd on: (leaf inputs, outputs that
    carry gradients). `everything`, a list, receives all of fn's outputs."""
    import torch
    work = leaves(inputs, idx)
    with torch.enable_grad():
        out = fn(*work)
    if everything is not None:
        everything.extend(out if isinstance(out, (tuple, list)) else [out])
    outs = differentiable_outputs(out)
    if not outs:
        err = TaskError(f"direction = \"backward\", but no output of {what} carries a gradient "
                        "(does it call a torch.autograd.Function, and do its inputs need gradients?)")
        err.tf_data = {"key": "direction"}
        raise err
    return work, outs


def grad_outputs(harness_module, case, seed, outs):
    import torch
    fn = getattr(harness_module, "grad_outputs", None)
    if fn is not None:
        grads = list(fn(case, seed, outs))
        if len(grads) != len(outs) or any(tuple(g.shape) != tuple(o.shape) for g, o in zip(grads, outs)):
            err = TaskError("grad_outputs(case, seed, outputs) must return one tensor per output carrying a "
                            "gradient, of its shape")
            err.tf_data = {"key": "direction"}
            raise err
        return grads
    grads = []
    for k, o in enumerate(outs):
        g = torch.Generator(device=o.device).manual_seed(1_000_003 * (seed + 1) + k)
        grads.append(torch.randn(o.shape, generator=g, device=o.device, dtype=torch.float32).to(o.dtype))
    return grads


def gradients(outs, work, idx, grads, retain_graph=False):
    """The gradients of `outs` (weighted by `grads`) for the inputs `idx` of `work`; an input
    the outputs do not depend on gets zeros."""
    import torch
    got = torch.autograd.grad(outs, [work[i] for i in idx], grads, retain_graph=retain_graph, allow_unused=True)
    return [torch.zeros_like(work[i]) if g is None else g for g, i in zip(got, idx)]


def reference_gradients(harness_module, inputs, idx, grads, float64=True):
    """The reference gradients of the inputs `idx`: the harness's reference_backward, or
    autograd through its reference (on float64 copies of the floating tensors when asked)."""
    import torch

    def up(x):
        return x.detach().to(torch.float64) if float64 and _float_tensor(x) else x

    fn = getattr(harness_module, "reference_backward", None)
    if fn is not None:
        with torch.no_grad():
            got = fn([up(g) for g in grads], *[up(x) for x in inputs])
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        if len(got) != len(idx):
            err = TaskError(f"reference_backward returned {len(got)} gradients for {len(idx)} grad inputs")
            err.tf_data = {"key": "direction"}
            raise err
        return got
    cast = [up(x) for x in inputs]
    work, outs = forward(harness_module.reference, cast, idx, what="the reference")
    return gradients(outs, work, idx, [up(g) for g in grads])

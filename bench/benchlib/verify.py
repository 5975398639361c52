"""Checking an output against the reference, with the rule tritonforge's worker applies:
every element |out - ref| <= atol + rtol * |ref| against a reference computed on inputs
upcast to float64 (unless the task says "as-is"); integers must match exactly; a NaN where
the reference has none fails."""

import math


def upcast(obj):
    import torch
    if isinstance(obj, torch.Tensor) and obj.is_floating_point() and obj.dtype != torch.float64:
        return obj.to(torch.float64)
    if isinstance(obj, (tuple, list)):
        return type(obj)(upcast(o) for o in obj)
    return obj


def clone(obj):
    import torch
    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, (tuple, list)):
        return type(obj)(clone(o) for o in obj)
    return obj


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def reference_outputs(harness, inputs, precision):
    import torch
    with torch.no_grad():
        if precision == "float64":
            return as_list(harness.reference(*upcast(clone(inputs))))
        return as_list(harness.reference(*clone(inputs)))


def compare(outputs, refs, rtol, atol):
    """Returns {"passed", "max_abs_err", "max_rel_err", "reason"?}."""
    import torch
    res = {"passed": True, "max_abs_err": 0.0, "max_rel_err": 0.0}
    outputs = as_list(outputs)
    if len(outputs) != len(refs):
        return {**res, "passed": False, "reason": f"{len(outputs)} outputs, reference has {len(refs)}"}
    for i, (o, r) in enumerate(zip(outputs, refs)):
        if not isinstance(r, torch.Tensor):
            # None or a Python number (e.g. the unused members of a loss's tuple): as the worker does.
            if isinstance(o, torch.Tensor) and o.numel() == 1:
                o = o.item()
            ok = abs(float(o) - r) <= atol + rtol * abs(r) if isinstance(r, float) and o is not None else o == r
            if not ok:
                return {**res, "passed": False, "reason": f"output {i}: got {o!r}, expected {r!r}"}
            continue
        if not isinstance(o, torch.Tensor) or tuple(o.shape) != tuple(r.shape):
            shape = tuple(o.shape) if isinstance(o, torch.Tensor) else type(o).__name__
            return {**res, "passed": False, "reason": f"output {i} is {shape}, expected {tuple(r.shape)}"}
        r = r.to(o.device)
        if not o.dtype.is_floating_point and not r.dtype.is_floating_point:
            bad = o.to(torch.int64) != r.to(torch.int64)
            if bool(bad.any()):
                return {**res, "passed": False, "reason": f"output {i}: {int(bad.sum())} of {o.numel()} elements differ"}
            continue
        o64 = o.to(torch.float64)
        r64 = r.to(torch.float64)
        diff = (o64 - r64).abs()
        good = (diff <= atol + rtol * r64.abs()) | (torch.isnan(o64) & torch.isnan(r64)) | \
            (torch.isinf(r64) & (o64 == r64))
        finite = torch.isfinite(diff)
        if bool(finite.any()):
            d = diff[finite]
            res["max_abs_err"] = max(res["max_abs_err"], float(d.max()))
            rel = d / r64.abs()[finite].clamp_min(1e-30)
            res["max_rel_err"] = max(res["max_rel_err"], float(rel.max()))
        if not bool(good.all()):
            bad = ~good
            idx = torch.nonzero(bad)[0].tolist()
            got, exp = float(o64[tuple(idx)]), float(r64[tuple(idx)])
            kind = "NaN" if math.isnan(got) else "outside tolerance"
            res.update(passed=False, reason=f"output {i}: {int(bad.sum())} of {o.numel()} elements wrong, first at "
                                            f"{idx}: got {got:.6g}, expected {exp:.6g} ({kind})")
            return res
    return res

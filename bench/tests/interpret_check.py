"""Runs one suite kernel as written on its harness's SMALL_CASE through Triton's CPU
interpreter and compares it with the float64 reference; prints one JSON line.
Used by test_interpret.py (run with TRITON_INTERPRET=1 set, torch installed).

  python interpret_check.py NAME [--fp16-inputs]

--fp16-inputs casts floating inputs to fp16 first: Triton 3.6's interpreter computes bf16
tl.dot wrongly, so matmul_bf16's indexing is checked with fp16 inputs instead."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchlib import suite, verify  # noqa: E402


def main():
    import torch
    name = sys.argv[1]
    spec = suite.load_spec(name)
    harness = suite.load_module(spec.harness, "harness")
    harness.DEVICE = "cpu"
    mod = suite.load_module(spec.source, "kernel")
    inputs = harness.make_inputs(dict(harness.SMALL_CASE), 0)
    if "--fp16-inputs" in sys.argv:
        inputs = tuple(t.to(torch.float16) if t.is_floating_point() else t for t in inputs)
    refs = verify.reference_outputs(harness, inputs, spec.reference_precision)
    out = getattr(mod, spec.launcher)(*verify.clone(inputs))
    res = verify.compare(out, refs, spec.rtol, spec.atol)
    print(json.dumps(res))


if __name__ == "__main__":
    main()

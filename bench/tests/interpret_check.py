"""Runs one suite kernel as written on its harness's SMALL_CASE through Triton's CPU
interpreter and compares it with the float64 reference; prints one JSON line.
Used by test_interpret.py (run with TRITON_INTERPRET=1 set, torch installed).

  python interpret_check.py NAME

Triton 3.6's interpreter keeps bf16 values as their raw 16 bits (numpy uint16) and tl.dot
multiplies those bits as integers; exact_bf16_dot() widens bf16 operands to float32 first, so
matmul_bf16 is checked on bf16 inputs like the others."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchlib import suite, verify  # noqa: E402


def exact_bf16_dot():
    """Makes the interpreter's tl.dot take bf16 operands as float32. The widening is exact
    (bf16 is the top half of a float32), and a GPU's bf16 dot also forms exact products and
    sums them in float32, so this is what the kernel computes on the GPU. A Triton whose
    interpreter gets bf16 right computes the same with or without it."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    plain_dot = builder.create_dot

    def widened(handle):
        if handle.dtype.scalar != tl.bfloat16:
            return handle
        bits = handle.data.view(np.uint16).astype(np.uint32) << 16
        return interpreter.TensorHandle(bits.view(np.float32), tl.float32)

    def create_dot(self, a, b, *rest):
        return plain_dot(self, widened(a), widened(b), *rest)

    builder.create_dot = create_dot


def main():
    exact_bf16_dot()
    name = sys.argv[1]
    spec = suite.load_spec(name)
    harness = suite.load_module(spec.harness, "harness")
    harness.DEVICE = "cpu"
    mod = suite.load_module(spec.source, "kernel")
    inputs = harness.make_inputs(dict(harness.SMALL_CASE), 0)
    refs = verify.reference_outputs(harness, inputs, spec.reference_precision)
    out = getattr(mod, spec.launcher)(*verify.clone(inputs))
    res = verify.compare(out, refs, spec.rtol, spec.atol)
    print(json.dumps(res))


if __name__ == "__main__":
    main()

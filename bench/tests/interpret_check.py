"""Runs one suite kernel as written on its harness's SMALL_CASE through Triton's CPU
interpreter and compares it with the float64 reference; prints one JSON line.
Used by test_interpret.py (run with TRITON_INTERPRET=1 set, torch installed).

  python interpret_check.py NAME

The interpreter's faults in Triton 3.6 (bf16 tl.dot, numpy 2.4) are worked around by
bench/benchlib/interpreter_fixes.py, so matmul_bf16 is checked on bf16 inputs like the others."""

import json
import os
import sys

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH_DIR)
from benchlib import interpreter_fixes, suite, verify  # noqa: E402


def main():
    interpreter_fixes.apply()
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

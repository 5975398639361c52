"""Each kernel as written computes what its reference computes: run on the CPU through
Triton's interpreter on the harness's SMALL_CASE (shapes chosen so that every mask is
exercised). Needs torch; skipped without it."""

import json
import os
import subprocess
import sys

import pytest

from benchlib import suite

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except Exception:
    HAVE_TORCH = False

pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (the interpreter needs it)")


def _check(name, *extra):
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([sys.executable, os.path.join(HERE, "interpret_check.py"), name, *extra],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", [n for n in suite.ORDER if n != "matmul_bf16"])
def test_kernel_matches_reference_in_the_interpreter(name):
    res = _check(name)
    assert res["passed"], res


def test_matmul_bf16_indexing_with_fp16_inputs():
    # The interpreter's bf16 dot is wrong (Triton 3.6); the kernel's indexing is what is checked.
    res = _check("matmul_bf16", "--fp16-inputs")
    assert res["passed"], res

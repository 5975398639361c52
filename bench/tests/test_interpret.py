"""Each kernel as written computes what its reference computes: run on the CPU through
Triton's CPU interpreter on the harness's SMALL_CASE (shapes chosen so that every mask is
exercised). Needs torch (scripts/setup.sh --tests installs it; no GPU needed)."""

import json
import os
import subprocess
import sys

import pytest

from benchlib import suite

HERE = os.path.dirname(os.path.abspath(__file__))


def _check(name):
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([sys.executable, os.path.join(HERE, "interpret_check.py"), name],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", suite.ORDER)
def test_kernel_matches_reference_in_the_interpreter(name):
    res = _check(name)
    assert res["passed"], res

"""The transformation passes' golden outputs compute what their inputs compute: run under
Triton's CPU interpreter against torch, on shapes the tiles do not divide. Needs torch (not
a GPU; scripts/setup.sh --tests installs it)."""

import os
import subprocess
import sys


def test_golden_outputs_match_torch_under_the_interpreter():
    script = os.path.join(os.path.dirname(__file__), "transform_interpret_check.py")
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(": ok") >= 20, r.stdout

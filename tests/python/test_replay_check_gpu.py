"""The replay check on the GPU with a kernel that sums with atomics (capture_programs/atomic_program.py):
captured, replayed twice as written, then tuned with the tolerance the check settled on."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "python" / "capture_programs" / "atomic_program.py"
BINARY = Path(os.environ.get("TRITONFORGE_BINARY", ROOT / "build" / "tritonforge"))

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not BINARY.exists(), reason=f"{BINARY} not built")]


def test_an_atomic_sum_is_replayed_and_tuned_within_its_tolerance(tmp_path):
    env = dict(os.environ, TRITONFORGE_PYTHON=sys.executable, TRITONFORGE_WORKER_DIR=str(ROOT / "python"))
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run([str(BINARY), "capture", "-o", "cap", "--top", "1", "--optimize", "--budget", "20", "--",
                           sys.executable, str(PROGRAM)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=500)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    task = tmp_path / "cap" / "tasks" / "column_sum_kernel"
    check = json.loads((task / "replay_check.json").read_text())
    print(check["line"])  # the bits of an atomic sum may or may not differ between two replays
    assert check["verdict"] in ("reproduced", "within", "widened"), check
    assert "column_sum_kernel replayed as written" in proc.stderr
    atol = float(re.search(r"^atol = (\S+)$", (task / "task.toml").read_text(), re.M).group(1))
    assert atol == pytest.approx(check["atol"], rel=1e-5)
    result = json.loads((tmp_path / "cap" / "optimized" / "column_sum_kernel" / "result.json").read_text())
    assert result["status"] in ("improved", "unchanged"), result

"""bench/run's measurement of a backward task (direction = "backward"), on the CPU under
TRITON_INTERPRET=1 with an autograd Function written in torch: the kernel as written, a
planted wrong gradient standing for tritonforge's result, and the vendor through autograd are
each checked against the reference gradients and timed."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)

SOURCE = textwrap.dedent('''
    import torch

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * x * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return 2 * x * w * g + PLANTED, (x * x * g).sum(0)

    PLANTED = 0.0
''')

HARNESS = textwrap.dedent('''
    import torch

    DEVICE = "cpu"
    PEAK = None
    VENDOR = "torch"
    SMALL_CASE = {"T": 6, "H": 10}

    def make_inputs(case, seed):
        g = torch.Generator().manual_seed(seed)
        return (torch.randn(case["T"], case["H"], generator=g), torch.randn(case["H"], generator=g))

    def reference(x, w):
        return x * x * w

    def vendor(x, w):
        return x * x * w

    def flops(case):
        return 3 * case["T"] * case["H"]

    def bytes(case):
        return 4 * case["T"] * case["H"]
''')

RUN = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from benchlib import measure
    print(json.dumps(measure.op_measure_real(json.loads(sys.argv[2])), default=str))
''')


IN_PLACE = SOURCE.replace("return 2 * x * w * g + PLANTED, (x * x * g).sum(0)",
                          "dw = (x * x * g).sum(0)\n        return g.mul_(2 * x * w), dw")


def measure(tmp_path, tf_source):
    (tmp_path / "harness.py").write_text(HARNESS)
    spec = {"name": "square", "source": str(tmp_path / "square.py"), "harness": str(tmp_path / "harness.py"),
            "launcher": "Square.apply", "cases": [{"T": 6, "H": 10}], "rtol": 1e-6, "atol": 1e-6,
            "reference_precision": "float64", "in_place": [], "direction": "backward", "module": None,
            "pythonpath": []}
    args = {"spec": spec, "small": True, "tritonforge_source": tf_source}
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([sys.executable, "-c", RUN, BENCH, json.dumps(args)], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    (case,) = json.loads(r.stdout.strip().splitlines()[-1])["cases"]
    return case


# A backward that computes in place over its output gradient is right: the reference
# gradients are computed from a copy of it.
def test_a_backward_in_place_over_its_output_gradient_passes(tmp_path):
    (tmp_path / "square.py").write_text(IN_PLACE)
    (tmp_path / "same.py").write_text(IN_PLACE)
    case = measure(tmp_path, str(tmp_path / "same.py"))
    assert case["baseline"]["verify"]["passed"], case["baseline"]["verify"]
    assert case["tritonforge"]["verify"]["passed"], case["tritonforge"]["verify"]


def test_a_backward_task_checks_and_times_the_gradients(tmp_path):
    (tmp_path / "square.py").write_text(SOURCE)
    (tmp_path / "planted.py").write_text(SOURCE.replace("PLANTED = 0.0", "PLANTED = 0.01"))
    case = measure(tmp_path, str(tmp_path / "planted.py"))
    assert case["baseline"]["status"] == "ok", case["baseline"]
    assert case["baseline"]["verify"]["passed"], case["baseline"]["verify"]
    assert case["baseline"]["ms"] > 0
    assert case["vendor"]["verify"]["passed"], case["vendor"]["verify"]
    assert not case["tritonforge"]["verify"]["passed"], case["tritonforge"]["verify"]

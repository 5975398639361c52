"""The fused-sum and fused-cast passes' outputs run on a GPU and return what the launchers as
written return: a per-element loss summed by torch (the gradient beside it bit for bit, the sum
within its float32 rounding: the atomics add the blocks in another order), a per-row bf16
error's mean (within bf16 rounding), and outputs converted after the launch (a block fp8
dequantization returned in bfloat16, a scaled copy rebound to float16), bit for bit: the
stores round to nearest as torch's conversion does; per-program partial rows summed along the
programs (within float32 rounding), and the planted fault of a kernel that ignores the stride
it is given (a wrong sum, nothing written outside the accumulator). On shapes the blocks do not divide. Also times the loss both ways at
2048 x 32000 and prints it (not asserted: a figure comes from bench runs). Skipped visibly
without a CUDA GPU."""

import importlib.util
import os

import pytest

pytestmark = pytest.mark.gpu

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "transform")


def load(case, which):
    path = os.path.join(GOLDEN, case, which)
    spec = importlib.util.spec_from_file_location(f"tf_fe_{case.replace('/', '_')}_{which[:-3]}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def both(case):
    return load(case, "input.py"), load(case, "expected.py")


def log_probs(rows, cols, seed):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(rows, cols, device="cuda", generator=g).log_softmax(-1).half()
    return x, torch.randn(rows, cols, device="cuda", generator=g).log_softmax(-1).half()


@pytest.mark.parametrize("shape", [(1, 1), (37, 1000), (256, 32000)])
def test_elementwise_loss_matches_the_launcher_as_written(shape):
    import torch

    x, y = log_probs(*shape, seed=0)
    orig, fused = both("fused-sum/elementwise_loss")
    (loss_a, dx_a), (loss_b, dx_b) = orig.jsd(x, y), fused.jsd(x, y)
    torch.cuda.synchronize()
    assert loss_b.dtype == loss_a.dtype and loss_b.shape == loss_a.shape
    torch.testing.assert_close(dx_b, dx_a, rtol=0, atol=0)
    torch.testing.assert_close(loss_b.float(), loss_a.float(), rtol=2e-3, atol=1e-6)


@pytest.mark.parametrize("shape", [(1, 3), (37, 100), (4096, 128)])
def test_row_error_mean_matches_the_launcher_as_written(shape):
    import torch

    g = torch.Generator(device="cuda").manual_seed(1)
    a, b = (torch.randn(*shape, device="cuda", generator=g).half() for _ in range(2))
    orig, fused = both("fused-sum/per_row_mean")
    x, y = orig.row_error(a, b), fused.row_error(a, b)
    torch.cuda.synchronize()
    assert y.dtype == x.dtype == torch.bfloat16 and y.shape == x.shape
    torch.testing.assert_close(y.float(), x.float(), rtol=1e-2, atol=0)


@pytest.mark.parametrize("shape", [(1, 1), (37, 100), (4096, 4096), (30000, 1000)])
def test_partial_rows_summed_along_the_programs_match_the_launcher_as_written(shape):
    import torch

    g = torch.Generator(device="cuda").manual_seed(5)
    dy, x = (torch.randn(*shape, device="cuda", generator=g).half() for _ in range(2))
    w = torch.randn(shape[1], device="cuda", generator=g).half()
    orig, fused = both("fused-sum/partial_rows")
    (dx_a, dw_a), (dx_b, dw_b) = orig.scale_backward(dy, x, w), fused.scale_backward(dy, x, w)
    torch.cuda.synchronize()
    assert dw_b.dtype == dw_a.dtype and dw_b.shape == dw_a.shape
    torch.testing.assert_close(dx_b, dx_a, rtol=0, atol=0)
    torch.testing.assert_close(dw_b.float(), dw_a.float(), rtol=2e-3, atol=1e-3)
    # Two buffers of one launch, and an optional one (None without a weight).
    orig2, fused2 = both("fused-sum/two_partial_buffers")
    a, b = orig2.scale_backward(dy, x, w), fused2.scale_backward(dy, x, w)
    torch.testing.assert_close(b[0], a[0], rtol=0, atol=0)
    for got, want in zip(b[1:], a[1:]):
        torch.testing.assert_close(got.float(), want.float(), rtol=2e-3, atol=1e-3)
    orig3, fused3 = both("fused-sum/optional_partial_rows")
    for weight in (w, None):
        a, b = orig3.scale_backward(dy, x, weight), fused3.scale_backward(dy, x, weight)
        torch.testing.assert_close(b[0], a[0], rtol=0, atol=0)
        assert (a[1] is None) == (b[1] is None) == (weight is None)
        if weight is not None:
            torch.testing.assert_close(b[1].float(), a[1].float(), rtol=2e-3, atol=1e-3)


def test_own_row_stride_is_wrong_and_writes_nothing_outside():
    """The planted fault: a kernel that ignores the stride it is given gets only program 0's
    row into the accumulator (every other add dropped), and a guard tensor allocated around it
    is untouched."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(6)
    dy, x = (torch.randn(4096, 1000, device="cuda", generator=g).half() for _ in range(2))
    w = torch.randn(1000, device="cuda", generator=g).half()
    guards = [torch.full((1 << 20,), 7.0, device="cuda") for _ in range(8)]
    orig, fused = both("fused-sum/own_row_stride")
    (_, dw_a), (_, dw_b) = orig.scale_backward(dy, x, w), fused.scale_backward(dy, x, w)
    torch.cuda.synchronize()
    assert not torch.allclose(dw_b.float(), dw_a.float(), rtol=1e-2)
    assert all(bool((t == 7.0).all()) for t in guards)


def test_partial_rows_time_both_ways():
    import torch

    g = torch.Generator(device="cuda").manual_seed(7)
    dy, x = (torch.randn(8192, 4096, device="cuda", generator=g).half() for _ in range(2))
    w = torch.randn(4096, device="cuda", generator=g).half()
    orig, fused = both("fused-sum/partial_rows")
    times = {"as written": [], "fused-sum": []}
    for _ in range(5):  # interleaved
        for label, mod in (("as written", orig), ("fused-sum", fused)):
            mod.scale_backward(dy, x, w)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(20):
                mod.scale_backward(dy, x, w)
            end.record()
            torch.cuda.synchronize()
            times[label].append(start.elapsed_time(end) / 20)
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    print(f"partial rows 8192 x 4096 fp16: as written {med['as written']:.4f} ms, "
          f"fused-sum {med['fused-sum']:.4f} ms ({med['as written'] / med['fused-sum']:.2f}x), "
          f"{torch.cuda.get_device_name()}")


@pytest.mark.parametrize("shape", [(1, 1), (200, 136), (7168, 18432)])
def test_dequant_in_bf16_matches_the_launcher_as_written(shape):
    import math

    import torch

    g = torch.Generator(device="cuda").manual_seed(3)
    M, N = shape
    s = torch.rand(math.ceil(M / 128), math.ceil(N / 128), device="cuda", generator=g) + 0.5
    x = (torch.randn(M, N, device="cuda", generator=g) * 64).to(torch.float8_e4m3fn)
    orig, fused = both("fused-cast/dequant_to_bf16")
    a, b = orig.dequant(x, s), fused.dequant(x, s)
    torch.cuda.synchronize()
    assert a.dtype == b.dtype == torch.bfloat16
    torch.testing.assert_close(b, a, rtol=0, atol=0)


@pytest.mark.parametrize("n", [1, 5000, 1 << 22])
def test_rebound_half_matches_the_launcher_as_written(n):
    import torch

    x = torch.randn(n, device="cuda", generator=torch.Generator(device="cuda").manual_seed(4))
    orig, fused = both("fused-cast/rebound_half")
    a, b = orig.scale(x, 1.0 / 3.0), fused.scale(x, 1.0 / 3.0)
    torch.cuda.synchronize()
    assert a.dtype == b.dtype == torch.float16
    torch.testing.assert_close(b, a, rtol=0, atol=0)


def test_elementwise_loss_time_both_ways():
    import torch

    x, y = log_probs(2048, 32000, seed=2)
    orig, fused = both("fused-sum/elementwise_loss")
    times = {"as written": [], "fused-sum": []}
    for _ in range(5):  # interleaved
        for label, mod in (("as written", orig), ("fused-sum", fused)):
            mod.jsd(x, y)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(20):
                mod.jsd(x, y)
            end.record()
            torch.cuda.synchronize()
            times[label].append(start.elapsed_time(end) / 20)
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    print(f"elementwise loss 2048 x 32000 fp16: as written {med['as written']:.4f} ms, "
          f"fused-sum {med['fused-sum']:.4f} ms ({med['as written'] / med['fused-sum']:.2f}x), "
          f"{torch.cuda.get_device_name()}")

"""The gluon-gemm pass's outputs on a Hopper GPU: the Gluon route is taken (the route's launch
returns the launched kernel, not False) and computes what torch computes, on shapes the tiles do not divide, with B both
ways for 16-bit types (K-major and N-major), int8 exactly, fp8 within the tensor cores' running
sum; and a call the route does not fit (A's M dimension contiguous) runs the kernel as written
and is right too. Skipped visibly without a CUDA GPU, or on a GPU other than sm_90."""

import importlib.util
import os

import pytest

pytestmark = pytest.mark.gpu

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "transform", "gluon-gemm")


def load(case):
    path = os.path.join(GOLDEN, case, "expected.py")
    spec = importlib.util.spec_from_file_location(f"tf_gluon_{case}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def hopper():
    import torch

    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the Gluon lowering targets sm_90 (wgmma, TMA)")
    return torch


def counting(mod, name):
    """Wraps the module's Gluon launch so that the test sees which route each call took."""
    taken = []
    launch = getattr(mod, name)

    def wrapped(*args, **kwargs):
        launched = launch(*args, **kwargs)
        taken.append(launched is not False)
        return launched

    route = getattr(mod, name[1:-len("_gluon_launch")])
    while not hasattr(route, "_launch"):  # under @triton.autotune / @triton.heuristics
        route = route.fn
    route._launch = wrapped
    return taken


@pytest.mark.parametrize("shape", [(256, 256, 256), (300, 136, 520), (1000, 520, 72)])
def test_fp16_gemm_both_layouts(shape):
    torch = hopper()
    M, N, K = shape
    mod = load("tutorial_pointer_advance")
    taken = counting(mod, "_matmul_kernel_gluon_launch")
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=g)
    for b in (torch.randn(K, N, device="cuda", dtype=torch.float16, generator=g),
              torch.randn(N, K, device="cuda", dtype=torch.float16, generator=g).T):
        c = mod.matmul(a, b)
        torch.cuda.synchronize()
        ref = (a.float() @ b.float()).half()
        torch.testing.assert_close(c, ref, rtol=2e-2, atol=5e-2)
    assert taken == [True, True], taken


@pytest.mark.parametrize("shape", [(256, 256, 256), (300, 136, 520)])
def test_int8_gemm_exact(shape):
    torch = hopper()
    M, N, K = shape
    mod = load("int8_out_dtype")
    taken = counting(mod, "_int8_gemm_kernel_gluon_launch")
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randint(-128, 127, (M, K), device="cuda", dtype=torch.int8, generator=g)
    # The kernel takes B's N stride as 1: B (K, N) row-major, which int8 wgmma cannot read
    # from shared memory, so the route declines and the kernel as written runs.
    for b, want in ((torch.randint(-128, 127, (K, N), device="cuda", dtype=torch.int8, generator=g), False),):
        c = mod.int8_gemm(a, b)
        torch.cuda.synchronize()
        ref = (a.double() @ b.double()).to(torch.int32)
        assert torch.equal(c, ref)
        assert taken[-1] == want


@pytest.mark.parametrize("shape", [(256, 256, 256), (300, 136, 520)])
def test_fp8_scaled_gemm(shape):
    torch = hopper()
    M, N, K = shape
    mod = load("fp8_scaled")
    taken = counting(mod, "_fp8_gemm_kernel_gluon_launch")
    g = torch.Generator(device="cuda").manual_seed(2)
    a = torch.randn(M, K, device="cuda", generator=g).to(torch.float8_e4m3fn)
    b = torch.randn(N, K, device="cuda", generator=g).div(K ** 0.5).to(torch.float8_e4m3fn)
    s = torch.tensor([0.5], device="cuda")
    c = mod.fp8_gemm(a, b, s)
    torch.cuda.synchronize()
    ref = (a.float() @ b.float().T) * 0.5
    torch.testing.assert_close(c.float(), ref, rtol=1e-2, atol=1e-1)
    # fp8 rows of K bytes: TMA takes them 16-byte aligned only (K=520: the kernel as written).
    assert taken == [K % 16 == 0], taken


def test_a_column_major_runs_the_kernel_as_written():
    torch = hopper()
    mod = load("tutorial_pointer_advance")
    taken = counting(mod, "_matmul_kernel_gluon_launch")
    g = torch.Generator(device="cuda").manual_seed(3)
    a = torch.randn(200, 300, device="cuda", dtype=torch.float16, generator=g).T  # (300, 200), M contiguous
    b = torch.randn(200, 136, device="cuda", dtype=torch.float16, generator=g)
    c = mod.matmul(a, b)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=2e-2, atol=5e-2)
    assert taken == [False], taken


# (8, 1024, 1024, 256): 512 tiles of 128x128, several per persistent program, each starting
# from the pointers as passed (a batch offset carried into the next tile was wrong there).
@pytest.mark.parametrize("shape", [(3, 256, 256, 256), (3, 300, 136, 520), (8, 1024, 1024, 256)])
def test_batched_gemm_3d_descriptors(shape):
    torch = hopper()
    batch, M, N, K = shape
    mod = load("batched_3d_descriptors")
    taken = counting(mod, "_bmm_kernel_gluon_launch")
    g = torch.Generator(device="cuda").manual_seed(4)
    a = torch.randn(batch, M, K, device="cuda", dtype=torch.float16, generator=g)
    for b in (torch.randn(batch, K, N, device="cuda", dtype=torch.float16, generator=g),
              torch.randn(batch, N, K, device="cuda", dtype=torch.float16, generator=g).transpose(1, 2)):
        c = mod.bmm(a, b)
        torch.cuda.synchronize()
        torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=2e-2, atol=5e-2)
    assert taken == [True, True], taken


def test_the_worker_names_the_route_it_recorded():
    """The worker's launch record marks the Gluon kernel (`dialect`), which the report turns
    into the route each case took; the kernel as written carries no mark."""
    torch = hopper()
    from tritonforge_worker import runner

    runner._install_launch_hook()
    mod = load("tutorial_pointer_advance")
    a = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    for b, dialect in ((torch.randn(256, 256, device="cuda", dtype=torch.float16), "gluon"),
                       (torch.randn(256, 256, device="cuda", dtype=torch.float16).T, "gluon")):
        with runner._recording() as rec:
            mod.matmul(a, b)
            torch.cuda.synchronize()
        kernels = runner._summarize_launches(rec)
        assert [k.get("dialect") for k in kernels] == [dialect], kernels
    with runner._recording() as rec:
        mod.matmul(a.T.contiguous().T, b)  # A M-contiguous: the kernel as written
        torch.cuda.synchronize()
    kernels = runner._summarize_launches(rec)
    assert [k.get("dialect") for k in kernels] == [None], kernels


def test_batched_base_alias():
    """A batch's base made once as a name (`q_base = q_ptr + bh * stride_qb`), B K-major, several
    tiles per program and rows the tiles do not divide: each batch reads its own operands."""
    torch = hopper()
    mod = load("batched_base_alias")
    taken = counting(mod, "_scores_kernel_gluon_launch")
    g = torch.Generator(device="cuda").manual_seed(5)
    q = torch.randn(8, 1000, 128, device="cuda", dtype=torch.float16, generator=g)
    k = torch.randn(8, 700, 128, device="cuda", dtype=torch.float16, generator=g)
    s = mod.scores(q, k)
    torch.cuda.synchronize()
    ref = (q.float() @ k.float().transpose(1, 2)).half()
    torch.testing.assert_close(s, ref, rtol=2e-2, atol=5e-2)
    assert taken == [True], taken


@pytest.mark.parametrize("case", ["autotuned", "heuristics"])
def test_autotuned_configurations_launch_through_the_route(case):
    """Under @triton.autotune (and @triton.heuristics) every configuration the autotuner
    benchmarks, and the one it picks, runs the Gluon kernel, and the result is right."""
    torch = hopper()
    mod = load(case)
    taken = counting(mod, "_matmul_kernel_gluon_launch")
    g = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randn(1000, 520, device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn(520, 712, device="cuda", dtype=torch.float16, generator=g)  # rows of 16-byte multiples (TMA)
    c = mod.matmul(a, b)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=2e-2, atol=5e-2)
    assert taken and all(taken), taken

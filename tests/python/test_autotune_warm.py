"""A compile worker compiles an @triton.autotune kernel's configurations once each, without its
benchmark, and leaves the autotuner as it was (python/tritonforge_worker/autotune_warm.py). A
real Autotuner (made by the decorator, no GPU needed) whose kernel records its launches."""

import types

import pytest

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402

from tritonforge_worker.autotune_warm import compile_only, share  # noqa: E402

BLOCKS = (16, 32, 64, 128, 256, 512, 1024)


def make_module(tmp_path, prune=None):
    configs = [triton.Config({"BLOCK": b}, num_warps=4) for b in BLOCKS]
    kw = {"prune_configs_by": {"early_config_prune": prune}} if prune else {}

    @triton.autotune(configs=configs, key=["n"], **kw)
    @triton.jit
    def scale(x_ptr, n, BLOCK: tl.constexpr):
        pass

    mod = types.ModuleType("warm_test_module")
    mod.__file__ = str(tmp_path / "warm_test_module.py")
    mod.scale = scale
    launches = []

    class Recorder:  # stands in for the JITFunction: what would be compiled
        def run(self, *args, **kwargs):
            launches.append(kwargs["BLOCK"])

    scale.fn = Recorder()
    return mod, scale, configs, launches


def test_each_configuration_once_then_as_before(tmp_path):
    mod, at, configs, launches = make_module(tmp_path)
    at.cache[(7,)] = configs[2]          # a choice made before, by an earlier call
    with compile_only([str(tmp_path)], mod) as found:
        assert found == [at]
        at.run(None, 4096, grid=(1,), warmup=False)
        assert set(at.cache) == {(4096,)}
    # Every configuration once (no benchmark loop), then the launch with the (first) pick.
    assert launches == list(BLOCKS) + [BLOCKS[0]]
    assert at.cache == {(7,): configs[2]}
    assert "prune_configs" not in at.__dict__
    assert at._do_bench is None           # the decorator's: Triton's benchmarker when it runs


def test_the_shares_cover_the_list_once(tmp_path):
    mod, at, configs, launches = make_module(tmp_path)
    seen = []
    for i in range(3):
        launches.clear()
        with compile_only([str(tmp_path)], mod, part=(i, 3)):
            at.run(None, 4096, grid=(1,), warmup=False)
        share_i = launches[:-1]
        assert len(share_i) in (2, 3)
        seen.extend(share_i)
    assert sorted(seen) == sorted(BLOCKS)


def test_a_share_of_the_pruned_list(tmp_path):
    def keep_small(configs, nargs, **kwargs):
        return [c for c in configs if c.kwargs["BLOCK"] <= 64]

    mod, at, configs, launches = make_module(tmp_path, prune=keep_small)
    seen = []
    for i in range(3):
        launches.clear()
        with compile_only([str(tmp_path)], mod, part=(i, 3)):
            at.run(None, 4096, grid=(1,), warmup=False)
        seen.extend(launches[:-1])
    assert sorted(seen) == [16, 32, 64]


def test_share_never_empty():
    assert share([1, 2, 3, 4, 5], (1, 2)) == [2, 4]
    assert share([1, 2], (3, 4)) == [2]
    assert share([9], (2, 4)) == [9]
    assert share([1, 2, 3], None) == [1, 2, 3]

"""An @triton.autotune kernel is timed at its best (python/tritonforge_worker/autotune_pin.py):
the pick of its own benchmark and the next configurations are timed again and the fastest
is pinned. A real Autotuner (made by the decorator, no GPU needed), a scripted timer."""

import sys
import types

import pytest

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402

from tritonforge_worker.autotune_pin import pin_best  # noqa: E402


def make_module(tmp_path):
    configs = [triton.Config({"BLOCK": b}, num_warps=4) for b in (64, 128, 256, 512)]

    @triton.autotune(configs=configs, key=["n"])
    @triton.jit
    def scale(x_ptr, n, BLOCK: tl.constexpr):
        pass

    mod = types.ModuleType("pin_test_module")
    mod.__file__ = str(tmp_path / "pin_test_module.py")
    mod.scale = scale
    return mod, scale, configs


def test_a_bad_pick_is_replaced_by_the_fastest(tmp_path):
    mod, at, configs = make_module(tmp_path)
    key = (4096, "torch.float32")
    # The benchmark ranked 512 first (a disturbed run); really 128 is fastest.
    at.cache[key] = configs[3]
    at.configs_timings = {configs[0]: [3.0, 2.9, 3.1], configs[1]: [2.0, 1.9, 2.1],
                          configs[2]: [2.5, 2.4, 2.6], configs[3]: [1.0, 0.9, 1.1]}
    true_ms = {64: 2.2, 128: 1.0, 256: 1.5, 512: 1.9}
    calls = []

    def time_fn():
        b = at.cache[key].kwargs["BLOCK"]
        calls.append(b)
        return true_ms[b]

    notes = pin_best([str(tmp_path)], mod, time_fn, top=3)
    assert at.cache[key].kwargs["BLOCK"] == 128
    assert calls == [512, 128, 256, 64]          # the pick first, then by the benchmark's order
    assert notes == [{"kernel": "scale", "picked": str(configs[3]), "pinned": str(configs[1]), "tried": 4,
                      "picked_ms": 1.9, "pinned_ms": 1.0}]
    # A second measurement in the same process does not time them again.
    assert pin_best([str(tmp_path)], mod, time_fn, top=3) == []
    assert len(calls) == 4


def test_only_the_top_ones_are_tried_and_failures_skipped(tmp_path):
    mod, at, configs = make_module(tmp_path)
    key = (1024,)
    at.cache[key] = configs[0]
    at.configs_timings = {configs[0]: [1.0, 1, 1], configs[1]: [float("inf")] * 3,
                          configs[2]: [1.2, 1, 1], configs[3]: [1.1, 1, 1]}

    def time_fn():
        b = at.cache[key].kwargs["BLOCK"]
        if b == 512:
            raise RuntimeError("out of resources")
        return {64: 1.0, 256: 0.8}[b]

    notes = pin_best([str(tmp_path)], mod, time_fn, top=2)
    assert at.cache[key].kwargs["BLOCK"] == 256     # 128 failed its benchmark; 512 fails here
    assert notes[0]["tried"] == 2


def test_several_shapes_in_one_call_are_left_as_picked(tmp_path):
    mod, at, configs = make_module(tmp_path)
    at.cache[(1,)] = configs[0]
    at.cache[(2,)] = configs[1]
    at.configs_timings = {c: [1.0, 1, 1] for c in configs}
    notes = pin_best([str(tmp_path)], mod, lambda: 1.0)
    assert notes == [{"kernel": "scale", "skipped": "it ran 2 shapes in one call"}]
    assert at.cache[(1,)] is configs[0] and at.cache[(2,)] is configs[1]


def test_an_unused_autotuner_is_left_alone(tmp_path):
    mod, at, _ = make_module(tmp_path)
    assert pin_best([str(tmp_path)], mod, lambda: 1.0) == []

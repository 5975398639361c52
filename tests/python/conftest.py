"""pytest set-up: the worker package on sys.path, and the `gpu` marker: GPU tests skip
visibly where torch sees no CUDA GPU."""

import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))


def _gpu_reason():
    try:
        import torch
    except Exception as exc:
        return f"needs a CUDA GPU (torch is not importable: {type(exc).__name__})"
    if not torch.cuda.is_available():
        return "needs a CUDA GPU (torch sees none)"
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU; skipped visibly elsewhere")


def pytest_collection_modifyitems(config, items):
    reason = _gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def repo_root():
    return ROOT

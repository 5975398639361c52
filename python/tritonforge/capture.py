"""`tritonforge.capture(folder)`: record the Triton launches made inside a `with` block.

    import tritonforge
    with tritonforge.capture("run1"):
        loss = model(batch).sum()
        loss.backward()

then `tritonforge capture --show run1` ranks the kernels by GPU time. The recorder lives with
the worker (tritonforge_worker.capture, the same one `tritonforge capture -- python prog.py`
installs); this finds it in the wheel (_core/python) or in a source checkout.
"""

from __future__ import annotations

import sys
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _worker_capture():
    try:
        from tritonforge_worker import capture as module
        return module
    except ImportError:
        pass
    for folder in (_PACKAGE_DIR / "_core" / "python", _PACKAGE_DIR.parent):
        if (folder / "tritonforge_worker" / "capture").is_dir():
            sys.path.append(str(folder))
            from tritonforge_worker import capture as module
            return module
    raise ImportError("tritonforge's capture recorder (tritonforge_worker.capture) is not installed beside it")


def capture(folder, save: bool = True, quota_mb: int = 2048, saved_per_kernel: int = 3):
    """A context manager recording every @triton.jit launch inside it into `folder`
    (launches/<pid>.json, and data/ with the tensors of up to `saved_per_kernel` distinct
    launches per kernel, at most `quota_mb` MiB)."""
    return _worker_capture().capture(folder, save=save, quota_mb=quota_mb, saved_per_kernel=saved_per_kernel)


def overlay(folder):
    """A context manager serving, inside it, the tuned kernels of a capture folder whose replay
    tasks were optimized (`tritonforge capture --optimize`, or `tritonforge run --overlay` once,
    which builds `folder/overlay/overlay.json`): each launch that matches a launch the search
    verified runs the tuned kernel; every other launch runs as written."""
    path = Path(folder)
    manifest = path if path.name == "overlay.json" else path / "overlay" / "overlay.json"
    if not manifest.is_file():
        raise FileNotFoundError(f"{manifest}: no overlay (build it with `tritonforge capture --optimize` or "
                                f"`tritonforge run --overlay {folder} -- ...`)")
    _worker_capture()
    from tritonforge_worker.capture.overlay import overlay as serve
    return serve(str(manifest))

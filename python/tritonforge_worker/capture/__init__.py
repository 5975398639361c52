"""Capture: the Triton launches of a running program, recorded as it runs unchanged.

    from tritonforge_worker.capture import capture
    with capture("run1"):          # or tritonforge.capture("run1")
        train_step()

`tritonforge capture -- python prog.py ...` does the same for a whole program: it starts the
program with boot/ first on PYTHONPATH, whose sitecustomize.py installs a Recorder as soon as
the program imports triton (start_from_environment). recorder.py says what is recorded and how;
snapshot.py how tensors are saved for replay; the binary reads DIR/launches/*.json.
"""

from __future__ import annotations

import contextlib
import os

from .recorder import Recorder, install_at_exit

ENV_DIR = "TRITONFORGE_CAPTURE_DIR"
ENV_OPTIONS = "TRITONFORGE_CAPTURE_OPTIONS"  # "save=0,quota_mb=2048,per_kernel=3,timing=profiler"


def _options(text):
    out = {}
    for item in filter(None, (text or "").split(",")):
        key, _, value = item.partition("=")
        if key == "save":
            out["save"] = value not in ("0", "false", "no")
        elif key == "quota_mb":
            out["quota_mb"] = int(value)
        elif key == "per_kernel":
            out["saved_per_kernel"] = int(value)
        elif key == "timing":
            out["timing"] = value
    return out


@contextlib.contextmanager
def capture(folder, save=True, quota_mb=2048, saved_per_kernel=3, timing="events"):
    """Records the Triton launches made inside the block into `folder` (launches/<pid>.json,
    data/); timing="profiler" reads each kernel's GPU time from torch.profiler (CUPTI) at the
    block's end. Yields the Recorder."""
    recorder = Recorder(folder, save=save, quota_mb=quota_mb, saved_per_kernel=saved_per_kernel, timing=timing).install()
    try:
        yield recorder
    finally:
        recorder.uninstall()


def start_from_environment():
    """Installs a Recorder for $TRITONFORGE_CAPTURE_DIR; called once triton is imported."""
    folder = os.environ.get(ENV_DIR)
    if not folder:
        return None
    recorder = Recorder(folder, **_options(os.environ.get(ENV_OPTIONS))).install()
    install_at_exit(recorder)
    return recorder

"""Put first on PYTHONPATH by `tritonforge capture` and `tritonforge run --overlay`: records the
program's Triton launches, and serves tuned kernels to it.

Python imports the first sitecustomize on its path at start-up; this one runs the one it
shadows (a distribution's or a virtual environment's), then waits for the program to import
triton and installs the recorder (and the overlay) right after (the program runs unchanged, and one that never
imports triton pays nothing)."""

import importlib.abc
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _run_shadowed():
    for entry in sys.path:
        folder = os.path.abspath(entry or os.getcwd())
        if folder == _HERE:
            continue
        path = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("_tritonforge_shadowed_sitecustomize", path)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except Exception as e:  # theirs failing must not stop the program: Python only warns too
                print(f"tritonforge capture: {path}: {type(e).__name__}: {e}", file=sys.stderr)
            return


class _AfterTriton(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of `triton` so that the recorder is installed
    once the package has been executed."""

    def find_spec(self, name, path=None, target=None):
        if name != "triton":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_record(module):
            exec_module(module)
            if os.environ.get("TRITONFORGE_CAPTURE_DIR"):
                try:
                    from tritonforge_worker.capture import start_from_environment
                    start_from_environment()
                except Exception as e:
                    print(f"tritonforge capture: not recording: {type(e).__name__}: {e}", file=sys.stderr)
            if os.environ.get("TRITONFORGE_OVERLAY"):  # after the recorder: its launches are timed
                try:
                    from tritonforge_worker.capture import overlay
                    overlay.start_from_environment()
                except Exception as e:
                    print(f"tritonforge overlay: not serving tuned kernels: {type(e).__name__}: {e}", file=sys.stderr)

        spec.loader.exec_module = exec_then_record
        return spec


_run_shadowed()
if (os.environ.get("TRITONFORGE_CAPTURE_DIR") or os.environ.get("TRITONFORGE_OVERLAY")) and "triton" not in sys.modules:
    sys.meta_path.insert(0, _AfterTriton())

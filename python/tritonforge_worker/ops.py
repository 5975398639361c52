"""Op dispatch. Each op takes a dict of arguments and returns a JSON-able dict."""

import os
import platform
import sys

from . import PROTOCOL_VERSION, WORKER_VERSION


def op_hello(args):
    info = {
        "protocol": PROTOCOL_VERSION,
        "worker_version": WORKER_VERSION,
        "python": platform.python_version(),
        "executable": sys.executable,
        "pid": os.getpid(),
        "hostname": platform.node(),
        "triton": None,
        "torch": None,
        "numpy": None,
        "gpu": None,
        "gpu_reason": None,
        "tools": {},
    }
    try:
        import triton
        info["triton"] = triton.__version__
    except Exception as exc:  # reported, not fatal: parse still works
        info["triton_error"] = f"{type(exc).__name__}: {exc}"
    try:
        import numpy
        info["numpy"] = numpy.__version__
    except Exception:
        pass
    if args.get("probe_torch", True):
        try:
            import torch
            info["torch"] = torch.__version__
            info["cuda_runtime"] = getattr(torch.version, "cuda", None)
            if torch.cuda.is_available():
                props = torch.cuda.get_device_properties(0)
                info["gpu"] = {
                    "name": props.name,
                    "cc": [props.major, props.minor],
                    "sms": props.multi_processor_count,
                    "memory_bytes": int(props.total_memory),
                    "l2_bytes": int(getattr(props, "L2_cache_size", 0) or 0),
                    "device_count": torch.cuda.device_count(),
                    # Every visible device by model (`--gpus` pins one worker to each, and
                    # groups them by model), with CUDA_VISIBLE_DEVICES as this process has it.
                    "devices": [{"index": i, "name": torch.cuda.get_device_name(i)}
                                for i in range(torch.cuda.device_count())],
                    "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
                }
                # What the device allows, where this torch tells it (the C++ side's GpuLimits
                # prefers these over its table of compute capabilities).
                for key, attr in (("shared_per_block_optin", "shared_memory_per_block_optin"),
                                  ("shared_per_sm", "shared_memory_per_multiprocessor"),
                                  ("registers_per_sm", "regs_per_multiprocessor"),
                                  ("max_threads_per_sm", "max_threads_per_multi_processor")):
                    value = getattr(props, attr, None)
                    if isinstance(value, int) and value > 0:
                        info["gpu"][key] = value
                try:
                    info["gpu"]["driver"] = _driver_version()
                except Exception:
                    pass
            else:
                info["gpu_reason"] = "torch sees no CUDA GPU"
        except Exception as exc:
            info["gpu_reason"] = f"torch is not usable: {type(exc).__name__}: {exc}"
    else:
        info["gpu_reason"] = "not probed"
    from .compiled import tool_paths
    info["tools"] = tool_paths()
    return info


def _driver_version():
    import subprocess
    out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, timeout=20)
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None


def dispatch(op, args):
    if op == "hello":
        return op_hello(args)
    if op == "parse":
        from .parse import op_parse
        return op_parse(args)
    if op == "compile":
        from .compiled import op_compile
        return op_compile(args)
    if op == "warm":
        from .runner import op_warm
        return op_warm(args)
    if op == "run":
        from .runner import op_run
        return op_run(args)
    if op == "preload":
        from .runner import op_preload
        return op_preload(args)
    if op == "ceilings":
        from .runner import op_ceilings
        return op_ceilings(args)
    if op == "profile_launch":
        from .runner import op_profile_launch
        return op_profile_launch(args)
    if op == "replay_check":
        from .capture.replay_check import op_replay_check
        return op_replay_check(args)
    if op == "guard":
        from .rewrite_guard import op_guard
        return op_guard(args)
    if op == "llm":
        from .llm_client import op_llm
        return op_llm(args)
    if op == "echo":  # for protocol tests
        return {"echo": args}
    raise ValueError(f"unknown op '{op}'")

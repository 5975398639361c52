#!/usr/bin/env python3
"""What a patch embedding costs through the libraries, beside tritonforge's result (issue 13).

    python3 scripts/gpu/patch_probe.py OUT_DIR [RESULT.py]

The suite's patch_embed case (ViT-B/16: x (128, 3, 224, 224) NCHW, w (768, 3, 16, 16), bias,
stride 16, fp16), timed like bench/run (CUDA events, L2 flushed, medians) and checked against
the float64 reference with the task's tolerance:
  cudnn             F.conv2d as nn.Conv2d calls it (the suite's vendor), cudnn.benchmark off;
  cudnn_benchmark   the same with cudnn.benchmark on (training scripts often set it);
  cudnn_nhwc        F.conv2d on a channels-last copy of x made beforehand (copy not timed);
  permute_addmm     the patches copied out as a (tokens, 768) matrix (reshape, permute,
                    contiguous) and one cuBLAS addmm with the bias: the plain GEMM over a
                    reshaped input, copy included;
  addmm_only        the addmm alone on a patch matrix made beforehand (the GEMM's share);
  tritonforge       RESULT.py's launcher `patch_embed` (a module tritonforge wrote), if given.
Writes OUT_DIR/patch_probe.json and prints one line per variant."""

import importlib.util
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from benchlib.measure import time_fn  # noqa: E402


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    B, C, H, W, D, P = 128, 3, 224, 224, 768, 16
    GH, GW = H // P, W // P
    M, K = B * GH * GW, C * P * P
    x = torch.randn(B, C, H, W, device="cuda", dtype=torch.float16)
    w = (torch.randn(D, C, P, P, device="cuda") / math.sqrt(K)).to(torch.float16)
    bias = (torch.randn(D, device="cuda") * 0.1).to(torch.float16)
    ref = torch.nn.functional.conv2d(x.double(), w.double(), bias.double(), stride=P).flatten(2).transpose(1, 2)
    flops = 2.0 * M * D * K

    def conv(xx):
        return torch.nn.functional.conv2d(xx, w, bias, stride=P).flatten(2).transpose(1, 2)

    def patches(xx):
        return xx.reshape(B, C, GH, P, GW, P).permute(0, 2, 4, 1, 3, 5).reshape(M, K)

    w2 = w.reshape(D, K).t()
    xp = patches(x).contiguous()
    x_nhwc = x.contiguous(memory_format=torch.channels_last)
    variants = [("cudnn", False, lambda: conv(x)), ("cudnn_benchmark", True, lambda: conv(x)),
                ("cudnn_nhwc", True, lambda: conv(x_nhwc)),
                ("permute_addmm", False, lambda: torch.addmm(bias, patches(x), w2).reshape(B, GH * GW, D)),
                ("addmm_only", False, lambda: torch.addmm(bias, xp, w2).reshape(B, GH * GW, D))]
    if len(sys.argv) > 2:
        spec = importlib.util.spec_from_file_location("tf_result", sys.argv[2])
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        variants.append(("tritonforge", False, lambda: mod.patch_embed(x, w, bias)))
    rows = []
    for name, bench_mode, fn in variants:
        torch.backends.cudnn.benchmark = bench_mode
        try:
            for _ in range(3):
                y = fn()  # warm-up (cudnn.benchmark chooses its algorithm on the first calls)
            ok = torch.allclose(y.double(), ref, rtol=2e-3, atol=2e-3)
            t = time_fn(fn)
            row = {"variant": name, "ms": t["median_ms"], "tflops": flops / t["median_ms"] / 1e9, "correct": bool(ok)}
        except Exception as exc:  # reported, the probe goes on
            row = {"variant": name, "error": f"{type(exc).__name__}: {exc}"[:300]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    torch.backends.cudnn.benchmark = False
    with open(os.path.join(out_dir, "patch_probe.json"), "w") as f:
        json.dump({"case": {"B": B, "C": C, "H": H, "W": W, "D": D, "P": P}, "rows": rows,
                   "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                   "gpu": torch.cuda.get_device_name()}, f, indent=1)


if __name__ == "__main__":
    main()

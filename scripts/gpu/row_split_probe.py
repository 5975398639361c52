#!/usr/bin/env python3
"""What splitting a long row over several programs buys a softmax when there are few rows
(issue 13, deliverable 4: "split rows for few long rows, a two-stage reduction"), before a
pass is written for it.

    python3 scripts/gpu/row_split_probe.py OUT_DIR [--quick]

For each shape (rows x columns, fp16), timed like bench/run (CUDA events, L2 flushed, medians)
and checked against torch.softmax in fp32:
  torch    torch.softmax;
  copy     y.copy_(x): the DRAM roofline of a read-once, write-once kernel;
  row      one program per row, online max and sum over the row in blocks, then a second walk
           that writes exp(x - max) / sum (the form column-loop and online-softmax produce),
           best over BLOCK and num_warps;
  split    SPLIT programs per row: a first kernel writes each chunk's running max and sum to a
           (rows, SPLIT) scratch, a second combines the row's SPLIT partials (max of maxima, sums
           rescaled) and writes its chunk; best over SPLIT, BLOCK and num_warps.
Writes OUT_DIR/row_split_probe.json and prints one line per shape and variant."""

import json
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from benchlib.measure import time_fn  # noqa: E402


@triton.jit
def _chunk_stats(x_row, lo, hi, BLOCK: tl.constexpr):
    # Running max and sum of exp(x - max) over columns [lo, hi) of one row.
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(lo, hi, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < hi, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - safe) + tl.exp(x - safe)
        m = m_new
    m_row = tl.max(m, axis=0)
    safe_row = tl.where(m_row == float("-inf"), 0.0, m_row)
    return m_row, tl.sum(s * tl.exp(m - safe_row), axis=0)


@triton.jit
def row_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * xs
    m, s = _chunk_stats(x_row, 0, n_cols, BLOCK)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * ys + cols, (tl.exp(x - m) / s).to(tl.float16), mask=cols < n_cols)


@triton.jit
def split_stats_kernel(x_ptr, part_m, part_s, n_cols, xs, chunk, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    lo = part * chunk
    hi = tl.minimum(lo + chunk, n_cols)
    m, s = _chunk_stats(x_ptr + row * xs, lo, hi, BLOCK)
    tl.store(part_m + row * SPLIT + part, m)
    tl.store(part_s + row * SPLIT + part, s)


@triton.jit
def split_norm_kernel(x_ptr, y_ptr, part_m, part_s, n_cols, xs, ys, chunk, SPLIT: tl.constexpr,
                      BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    ms = tl.load(part_m + row * SPLIT + tl.arange(0, SPLIT))
    ss = tl.load(part_s + row * SPLIT + tl.arange(0, SPLIT))
    m = tl.max(ms, axis=0)
    s = tl.sum(ss * tl.exp(ms - m), axis=0)
    lo = part * chunk
    hi = tl.minimum(lo + chunk, n_cols)
    for start in range(lo, hi, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * xs + cols, mask=cols < hi, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * ys + cols, (tl.exp(x - m) / s).to(tl.float16), mask=cols < hi)


def run_row(x, y, block, warps):
    row_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0), BLOCK=block, num_warps=warps)


def run_split(x, y, split, block, warps):
    rows, n = x.shape
    chunk = triton.cdiv(triton.cdiv(n, split), block) * block
    pm = torch.empty(rows, split, device=x.device, dtype=torch.float32)
    ps = torch.empty_like(pm)
    split_stats_kernel[(rows, split)](x, pm, ps, n, x.stride(0), chunk, SPLIT=split, BLOCK=block, num_warps=warps)
    split_norm_kernel[(rows, split)](x, y, pm, ps, n, x.stride(0), y.stride(0), chunk, SPLIT=split, BLOCK=block,
                                     num_warps=warps)


def main():
    out_dir = sys.argv[1]
    quick = "--quick" in sys.argv
    os.makedirs(out_dir, exist_ok=True)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    shapes = [(4, 1 << 22), (16, 1 << 20), (64, 1 << 18), (1024, 32000), (8192, 32000)]
    rows_cfg = [(1024, 4), (2048, 8), (4096, 8), (4096, 16)]
    split_cfg = [(s, b, w) for s in (4, 8, 16, 32, 64, 128) for b, w in ((1024, 4), (2048, 8), (4096, 8))]
    if quick:
        shapes = [(3, 5000), (2, 9000)]
        rows_cfg = rows_cfg[:1]
        split_cfg = [(4, 1024, 4), (8, 1024, 4)]
    torch.manual_seed(0)
    results = []
    for rows, n in shapes:
        x = torch.randn(rows, n, device=dev, dtype=torch.float16) * 4
        ref = torch.softmax(x.float(), dim=-1)
        y = torch.empty_like(x)

        def ok():
            return bool(torch.allclose(y.float(), ref, rtol=1e-2, atol=1e-5))

        entry = {"rows": rows, "cols": n}
        entry["torch"] = time_fn(lambda: torch.softmax(x, dim=-1))["median_ms"]
        entry["copy"] = time_fn(lambda: y.copy_(x))["median_ms"]
        best = None
        for b, w in rows_cfg:
            y.zero_()
            run_row(x, y, b, w)
            t = time_fn(lambda: run_row(x, y, b, w))["median_ms"] if ok() else None
            if t is not None and (best is None or t < best[0]):
                best = (t, {"BLOCK": b, "num_warps": w})
        entry["row"] = best
        best = None
        for s, b, w in split_cfg:
            if s * b > 4 * n:
                continue
            y.zero_()
            run_split(x, y, s, b, w)
            t = time_fn(lambda: run_split(x, y, s, b, w))["median_ms"] if ok() else None
            if t is not None and (best is None or t < best[0]):
                best = (t, {"SPLIT": s, "BLOCK": b, "num_warps": w})
        entry["split"] = best
        results.append(entry)
        print(json.dumps(entry), flush=True)
    with open(os.path.join(out_dir, "row_split_probe.json"), "w") as f:
        json.dump({"results": results, "torch": torch.__version__, "triton": triton.__version__,
                   "gpu": torch.cuda.get_device_name() if dev == "cuda" else "cpu"}, f, indent=1)


if __name__ == "__main__":
    main()

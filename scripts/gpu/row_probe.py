"""Probe (issue 13): softmax over long rows read once (the row kept in registers) against the
online-softmax form (two reads), at the suite's shape, with the measured copy bandwidth as the
roofline. Prints one line per variant."""
import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def online_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * xs
    y_row = y_ptr + row * ys
    m = tl.max(tl.full((1,), float("-inf"), dtype=tl.float32), axis=0)
    total = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        total = total * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    denom = tl.sum(total, axis=0)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - m) / denom
        tl.store(y_row + cols, y.to(tl.float16), mask=cols < n_cols)


@triton.jit
def online_variant_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK_SIZE: tl.constexpr, RECIP: tl.constexpr,
                          EXP2: tl.constexpr, EVICT: tl.constexpr = 0):
    # online_kernel, with the normalization as a multiply by the reciprocal (RECIP) and/or the
    # exponent as one fused multiply-add feeding exp2 (EXP2); EVICT: the first read asks L2 to keep
    # the row (evict_last) for the second, which reads it evict_first (1: also the stores; 2: loads only).
    row = tl.program_id(0)
    x_row = x_ptr + row * xs
    y_row = y_ptr + row * ys
    m = tl.max(tl.full((1,), float("-inf"), dtype=tl.float32), axis=0)
    total = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        if EVICT:
            x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"), eviction_policy="evict_last").to(tl.float32)
        else:
            x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        if EXP2:
            total = total * tl.exp2((m - m_safe) * 1.4426950408889634) + tl.exp2(x * 1.4426950408889634 - m_safe * 1.4426950408889634)
        else:
            total = total * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    denom = tl.sum(total, axis=0)
    inv = 1.0 / denom
    ml = m * 1.4426950408889634
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        if EVICT:
            x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"), eviction_policy="evict_first").to(tl.float32)
        else:
            x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        if EXP2:
            e = tl.exp2(x * 1.4426950408889634 - ml)
        else:
            e = tl.exp(x - m)
        if RECIP:
            y = e * inv
        else:
            y = e / denom
        if EVICT == 1:
            tl.store(y_row + cols, y.to(tl.float16), mask=cols < n_cols, eviction_policy="evict_first")
        else:
            tl.store(y_row + cols, y.to(tl.float16), mask=cols < n_cols)


@triton.jit
def once_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK_SIZE: tl.constexpr):
    # The pass's form: the three loops straight-lined when the row fits one block, the load
    # read once; the loops as written otherwise.
    row = tl.program_id(0)
    x_row = x_ptr + row * xs
    y_row = y_ptr + row * ys
    if (0 < n_cols) & (n_cols <= BLOCK_SIZE):
        start = 0
        cols = start + tl.arange(0, BLOCK_SIZE)
        row0 = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        row_max = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)
        x = row0
        row_max = tl.maximum(row_max, x)
        m = tl.max(row_max, axis=0)
        total = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        x = row0
        total += tl.exp(x - m)
        denom = tl.sum(total, axis=0)
        x = row0
        y = tl.exp(x - m) / denom
        tl.store(y_row + cols, y.to(tl.float16), mask=cols < n_cols)
    else:
        row_max = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            row_max = tl.maximum(row_max, x)
        m = tl.max(row_max, axis=0)
        total = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            total += tl.exp(x - m)
        denom = tl.sum(total, axis=0)
        for start in range(0, n_cols, BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            y = tl.exp(x - m) / denom
            tl.store(y_row + cols, y.to(tl.float16), mask=cols < n_cols)


@triton.jit
def once_online_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK_SIZE: tl.constexpr):
    # Online-softmax first, then the row kept: two loops straight-lined.
    row = tl.program_id(0)
    x_row = x_ptr + row * xs
    y_row = y_ptr + row * ys
    if (0 < n_cols) & (n_cols <= BLOCK_SIZE):
        start = 0
        cols = start + tl.arange(0, BLOCK_SIZE)
        row0 = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m = tl.max(tl.full((1,), float("-inf"), dtype=tl.float32), axis=0)
        total = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        x = row0
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        total = total * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
        denom = tl.sum(total, axis=0)
        x = row0
        y = tl.exp(x - m) / denom
        tl.store(y_row + cols, y.to(tl.float16), mask=cols < n_cols)


def main():
    M, N = 8192, 32000
    torch.manual_seed(0)
    x = (torch.randn(M, N, device="cuda") * 3).half()
    ref = torch.softmax(x.float(), dim=-1).half()
    big = torch.empty(512 * 1024 * 1024, device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(big)
    t = do_bench(lambda: dst.copy_(big), warmup=50, rep=300)
    bw = 2 * big.numel() / (t * 1e-3)
    roof = 2 * x.numel() * 2 / bw * 1e3
    print(f"copy {bw / 1e12:.2f} TB/s; roofline {roof:.4f} ms; torch.softmax {do_bench(lambda: torch.softmax(x, -1)):.4f} ms")
    y = torch.empty_like(x)
    runs = [(online_kernel, b, w, s) for b, w, s in [(8192, 8, 3), (4096, 8, 3), (4096, 4, 2)]]
    runs = [(k, b, w, s, kw) for k, b, w, s in runs for kw in [{}]]
    if "--evict" in sys.argv:
        runs = [(online_variant_kernel, b, w, s, dict(RECIP=0, EXP2=1, EVICT=ev))
                for b, w, s in [(8192, 8, 1), (8192, 8, 3), (4096, 8, 2), (4096, 4, 3), (2048, 4, 3)] for ev in (0, 1, 2)]
    else:
        runs += [(online_variant_kernel, b, w, s, dict(RECIP=r, EXP2=e)) for b, w, s in [(8192, 8, 3), (8192, 16, 3), (4096, 4, 3), (16384, 16, 2)]
                 for r, e in [(0, 0), (1, 0), (0, 1), (1, 1)]]
    for k, b, w, s, kw in runs:
        def f():
            k[(M,)](x, y, N, x.stride(0), y.stride(0), BLOCK_SIZE=b, num_warps=w, num_stages=s, **kw)
        try:
            f()
            torch.cuda.synchronize()
            ok = torch.allclose(y.float(), ref.float(), rtol=2e-3, atol=1e-6)
            ms = do_bench(f, warmup=25, rep=200)
            print(f"{k.__name__:20s} {kw} B={b:5d} w={w:2d} s={s}: {ms:.4f} ms, {100 * roof / ms:.0f}% of roofline, ok={ok}")
        except Exception as e:  # noqa: BLE001
            print(f"{k.__name__:20s} B={b} w={w} s={s}: failed: {str(e).splitlines()[0][:160]}")


main()


#!/usr/bin/env python3
"""What structure buys a convolution on this GPU, before a pass is written for it (issue 13).

    python3 scripts/gpu/conv_probe.py OUT_DIR [--quick]

The suite's conv2d_nhwc (x (8, 64, 64, 320) NHWC, w (320, 3, 3, 320), stride 1, padding 1,
fp16), hand-written in the forms a pass could produce, each timed like bench/run (CUDA events,
L2 flushed, medians), checked against cuDNN's result with the task's tolerance and set beside it:
  flat      the implicit GEMM with its (r, s, c) loops flattened (what flatten-loops makes):
            output pixels flattened into M, gathered loads masked for the padding;
  flat_cm   the same without the channel mask (C a multiple of BLOCK_K, known at launch);
  tma       the M tile a rectangle of output pixels (BP rows x BQ columns of one image), the
            input tile of each filter tap one TMA box of a 4-D descriptor over x (N, H, W, C) at
            (n, p0 + r - pad, q0 + s - pad, c0): the padding is the box's out-of-bounds part,
            which TMA fills with zeros (coordinates may be negative); w and y through 2-D
            descriptors;
  tma_ws    the same with the flattened loop warp-specialized.
Writes OUT_DIR/conv_probe.json and prints one line per variant. Needs torch, triton >= 3.4.
"""

import argparse
import json
import math
import os
import sys
import traceback

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from benchlib.measure import time_fn  # noqa: E402


def _alloc(size, alignment, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def conv_flat(x_ptr, w_ptr, y_ptr, N, H, W, C, K, P, Q, R, S, pad,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
              CMASK: tl.constexpr, STAGES: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_c = tl.arange(0, BLOCK_K)
    n = offs_m // (P * Q)
    pq = offs_m % (P * Q)
    p = pq // Q
    q = pq % Q
    m_ok = offs_m < N * P * Q
    n_ok = offs_n < K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    c_steps = tl.cdiv(C, BLOCK_K)
    for flat in tl.range(0, R * S * c_steps, num_stages=STAGES):
        r = flat // (S * c_steps)
        s = flat // c_steps % S
        c0 = flat % c_steps * BLOCK_K
        h = p - pad + r
        w = q - pad + s
        pix_ok = m_ok & (h >= 0) & (h < H) & (w >= 0) & (w < W)
        x_base = ((n * H + h) * W + w) * C
        cs = c0 + offs_c
        if CMASK:
            a = tl.load(x_ptr + x_base[:, None] + cs[None, :],
                        mask=pix_ok[:, None] & (cs[None, :] < C), other=0.0)
            b = tl.load(w_ptr + offs_n[None, :] * (R * S * C) + (r * S + s) * C + cs[:, None],
                        mask=(cs[:, None] < C) & n_ok[None, :], other=0.0)
        else:
            a = tl.load(x_ptr + x_base[:, None] + cs[None, :], mask=pix_ok[:, None], other=0.0)
            b = tl.load(w_ptr + offs_n[None, :] * (R * S * C) + (r * S + s) * C + cs[:, None],
                        mask=n_ok[None, :], other=0.0)
        acc += tl.dot(a, b)
    tl.store(y_ptr + offs_m[:, None] * K + offs_n[None, :], acc.to(tl.float16),
             mask=m_ok[:, None] & n_ok[None, :])


@triton.jit
def conv_tma(x_ptr, w_ptr, y_ptr, N, H, W, C, K, P, Q, R, S, pad,
             BP: tl.constexpr, BQ: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
             STAGES: tl.constexpr, WS: tl.constexpr):
    BLOCK_M: tl.constexpr = BP * BQ
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[N, H, W, C], strides=[H * W * C, W * C, C, 1],
                                       block_shape=[1, BP, BQ, BLOCK_K])
    w_desc = tl.make_tensor_descriptor(w_ptr, shape=[K, R * S * C], strides=[R * S * C, 1],
                                       block_shape=[BLOCK_N, BLOCK_K])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[N, P, Q, K], strides=[P * Q * K, Q * K, K, 1],
                                       block_shape=[1, BP, BQ, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    tiles_q = tl.cdiv(Q, BQ)
    tiles_p = tl.cdiv(P, BP)
    n = pid_m // (tiles_p * tiles_q)
    rest = pid_m % (tiles_p * tiles_q)
    p0 = rest // tiles_q * BP
    q0 = rest % tiles_q * BQ
    n0 = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    c_steps = tl.cdiv(C, BLOCK_K)
    for flat in tl.range(0, R * S * c_steps, num_stages=STAGES, warp_specialize=WS):
        r = flat // (S * c_steps)
        s = flat // c_steps % S
        c0 = flat % c_steps * BLOCK_K
        a = x_desc.load([n, p0 - pad + r, q0 - pad + s, c0]).reshape(BLOCK_M, BLOCK_K)
        b = w_desc.load([n0, (r * S + s) * C + c0])
        acc = tl.dot(a, b.T, acc)
    y_desc.store([n, p0, q0, n0], acc.to(tl.float16).reshape(1, BP, BQ, BLOCK_N))


@triton.jit
def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale, stride_bh, stride_seq,
             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             MASK: tl.constexpr, STAGES: tl.constexpr):
    # The suite's attention as tritonforge hands it back (exp2, the scale folded in); MASK
    # False: the key loop's bounds comparison dropped (seq_len a multiple of BLOCK_N).
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    base = bh * stride_bh
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :],
                mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start_n in tl.range(0, seq_len, BLOCK_N, num_stages=STAGES):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        if MASK:
            kt = tl.load(k_ptr + base + offs_n[None, :] * stride_seq + offs_d[:, None],
                         mask=offs_n[None, :] < seq_len, other=0.0)
            s = tl.dot(q, kt) * (sm_scale * 1.4426950408889634)
            s = tl.where(offs_n[None, :] < seq_len, s, float("-inf"))
        else:
            kt = tl.load(k_ptr + base + offs_n[None, :] * stride_seq + offs_d[:, None])
            s = tl.dot(q, kt) * (sm_scale * 1.4426950408889634)
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if MASK:
            v = tl.load(v_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                        mask=offs_n[:, None] < seq_len, other=0.0)
        else:
            v = tl.load(v_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :], out.to(tl.float16),
             mask=offs_m[:, None] < seq_len)


def attention_rows():
    B, Hh, S, D = 4, 32, 2048, 128
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(B, Hh, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    vt = time_fn(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v))
    rows = [{"variant": "sdpa", "ms": vt["median_ms"]}]
    print(f"sdpa {vt['median_ms']:.4f} ms", flush=True)
    for bm, bn, wp, st in [(128, 64, 8, 3), (128, 64, 8, 4), (128, 128, 8, 3), (128, 128, 8, 2)]:
        for mask in (True, False):
            o = torch.empty_like(q)
            kw = dict(bm=bm, bn=bn, warps=wp, stages=st, mask=mask)

            def fn():
                attn_fwd[(triton.cdiv(S, bm), B * Hh)](q, k, v, o, S, 1.0 / math.sqrt(D), q.stride(1), q.stride(2),
                                                     HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn, MASK=mask, STAGES=st,
                                                     num_warps=wp)
            row = {"variant": "attn_mask" if mask else "attn_nomask", **kw}
            try:
                fn()
                torch.cuda.synchronize()
                row["ok"] = bool(torch.allclose(o.float(), ref.float(), rtol=1e-2, atol=2e-3))
                t = time_fn(fn)
                row["ms"] = t["median_ms"]
                row["vendor_over"] = vt["median_ms"] / t["median_ms"]
                print(f"{row['variant']} {kw} {t['median_ms']:.4f} ms sdpa/this {row['vendor_over']:.2f} ok={row['ok']}", flush=True)
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
                print(f"{row['variant']} {kw} FAILED {row['error']}", flush=True)
            rows.append(row)
    return rows


def run_flat(x, w, y, bm, bn, bk, warps, stages, cmask):
    N, H, W, C = x.shape
    K, R, S, _ = w.shape
    P, Q = H, W
    grid = (triton.cdiv(N * P * Q, bm), triton.cdiv(K, bn))
    conv_flat[grid](x, w, y, N, H, W, C, K, P, Q, R, S, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                    CMASK=cmask, STAGES=stages, num_warps=warps)


def run_tma(x, w, y, bp, bq, bn, bk, warps, stages, ws):
    N, H, W, C = x.shape
    K, R, S, _ = w.shape
    P, Q = H, W
    grid = (N * triton.cdiv(P, bp) * triton.cdiv(Q, bq), triton.cdiv(K, bn))
    conv_tma[grid](x, w, y, N, H, W, C, K, P, Q, R, S, 1, BP=bp, BQ=bq, BLOCK_N=bn, BLOCK_K=bk,
                   STAGES=stages, WS=ws, num_warps=warps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    triton.set_allocator(_alloc)
    torch.manual_seed(0)
    N, H, W, C, K, R, S = 8, 64, 64, 320, 320, 3, 3
    x = torch.randn(N, H, W, C, device="cuda", dtype=torch.float16)
    w = (torch.randn(K, R, S, C, device="cuda") / math.sqrt(R * S * C)).to(torch.float16)
    ref = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2), padding=1).permute(0, 2, 3, 1)
    flops = 2.0 * N * H * W * K * R * S * C
    vendor = time_fn(lambda: torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2), padding=1))
    rows = [{"variant": "cudnn", "ms": vendor["median_ms"], "tflops": flops / vendor["median_ms"] / 1e9}]
    print(f"cudnn {vendor['median_ms']:.4f} ms", flush=True)
    variants = []
    for bm, bn, bk, wp, st in [(256, 128, 32, 8, 4), (256, 128, 64, 8, 3), (128, 128, 64, 8, 4), (256, 64, 64, 8, 4),
                               (128, 64, 64, 4, 4)]:
        for cm in (True, False):
            variants.append(("flat" if cm else "flat_cm", dict(bm=bm, bn=bn, bk=bk, warps=wp, stages=st, cmask=cm)))
    for bp, bq, bn, bk, wp, st in [(2, 64, 128, 64, 8, 4), (4, 64, 128, 64, 8, 3), (2, 64, 64, 64, 4, 4),
                                   (4, 64, 64, 64, 8, 4), (2, 64, 128, 32, 8, 5), (4, 32, 128, 64, 8, 4),
                                   (1, 64, 128, 64, 4, 4), (2, 64, 256, 64, 8, 3)]:
        for ws in (False, True):
            variants.append(("tma_ws" if ws else "tma", dict(bp=bp, bq=bq, bn=bn, bk=bk, warps=wp, stages=st, ws=ws)))
    if args.quick:
        variants = variants[:2] + [v for v in variants if v[0] == "tma"][:2]
    for name, kw in variants:
        y = torch.empty(N, H, W, K, device="cuda", dtype=torch.float16)
        fn = (lambda: run_flat(x, w, y, **kw)) if name.startswith("flat") else (lambda: run_tma(x, w, y, **kw))
        row = {"variant": name, **kw}
        try:
            fn()
            torch.cuda.synchronize()
            ok = torch.allclose(y.float(), ref.float(), rtol=2e-3, atol=2e-3)
            row["max_err"] = (y.float() - ref.float()).abs().max().item()
            row["ok"] = bool(ok)
            t = time_fn(fn)
            row["ms"] = t["median_ms"]
            row["tflops"] = flops / t["median_ms"] / 1e9
            row["vendor_over"] = vendor["median_ms"] / t["median_ms"]
            print(f"{name} {kw} {t['median_ms']:.4f} ms {row['tflops']:.0f} TFLOP/s vendor/this {row['vendor_over']:.2f} ok={ok} err={row['max_err']:.2e}", flush=True)
        except Exception as e:  # a variant that does not compile is a finding, not an end
            row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            print(f"{name} {kw} FAILED {row['error']}", flush=True)
            traceback.print_exc(limit=2)
        rows.append(row)
    rows += attention_rows()
    env = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
           "cuda": torch.version.cuda}
    with open(os.path.join(args.out, "conv_probe.json"), "w") as f:
        json.dump({"environment": env, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

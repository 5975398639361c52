#!/usr/bin/env python3
"""What structure buys on this GPU, before a pass is written for it (issue 13).

    python3 scripts/gpu/structure_probe.py OUT_DIR [--only attention,causal,gemm] [--quick]

Hand-written variants of the suite's attention (B=4, H=32, S=2048, D=128 fp16, with and without
the causal mask) and GEMMs (fp16 8192x4096x4096, bf16 4096x14336x4096), each feature switched on
one at a time, timed like bench/run (CUDA events, L2 flushed, medians), checked against torch, and
set beside the vendor. Features:
  attention: exp2 with the softmax scale folded in; K loaded as (N, D) then tl.trans; TMA
             descriptor loads; warp-specialized key loop; causal: the loop split into the blocks
             below the diagonal (no mask) and the diagonal blocks (masked).
  GEMM:      persistent tiles over TMA descriptors, flattened loops, warp specialization,
             epilogue subtiling.
  tf32:      fp32 4096^3 with B as given (N-contiguous) and as a K-contiguous copy made per
             call (wgmma tf32 takes K-major operands from shared memory), 2 to 8 warps.
Writes OUT_DIR/probe.json and prints one line per variant. Needs torch, triton >= 3.4, a GPU.
"""

import argparse
import json
import math
import os
import sys
import time
import traceback

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from benchlib.measure import time_fn  # noqa: E402


def _alloc(size, alignment, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


# --- attention ---------------------------------------------------------------------------------

@triton.jit
def _attn_block(acc, l_i, m_i, q, k_desc, v_desc, k_ptr, v_ptr, base, seq_len, qk_scale,
                offs_m, offs_d, lo, hi, stride_seq,
                MASK: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
                EXP2: tl.constexpr, KT: tl.constexpr, DESC: tl.constexpr, WS: tl.constexpr,
                STAGES: tl.constexpr):
    for start_n in tl.range(lo, hi, BLOCK_N, num_stages=STAGES, warp_specialize=WS):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        if DESC:
            k = k_desc.load([start_n, 0])
            kt = tl.trans(k)
        elif KT:
            k = tl.load(k_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                        mask=offs_n[:, None] < seq_len, other=0.0)
            kt = tl.trans(k)
        else:
            kt = tl.load(k_ptr + base + offs_n[None, :] * stride_seq + offs_d[:, None],
                         mask=offs_n[None, :] < seq_len, other=0.0)
        s = tl.dot(q, kt) * qk_scale
        if MASK:
            keep = (offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < seq_len)
            s = tl.where(keep, s, float("-inf"))
        else:
            s = tl.where(offs_n[None, :] < seq_len, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        if EXP2:
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
        else:
            p = tl.exp(s - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if DESC:
            v = v_desc.load([start_n, 0])
        else:
            v = tl.load(v_ptr + base + offs_n[:, None] * stride_seq + offs_d[None, :],
                        mask=offs_n[:, None] < seq_len, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, qk_scale, stride_bh, stride_seq,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                CAUSAL: tl.constexpr, SPLIT: tl.constexpr, EXP2: tl.constexpr, KT: tl.constexpr,
                DESC: tl.constexpr, WS: tl.constexpr, STAGES: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    base = bh * stride_bh
    k_desc = None
    v_desc = None
    if DESC:
        q_desc = tl.make_tensor_descriptor(q_ptr + base, shape=[seq_len, HEAD_DIM], strides=[stride_seq, 1],
                                           block_shape=[BLOCK_M, HEAD_DIM])
        k_desc = tl.make_tensor_descriptor(k_ptr + base, shape=[seq_len, HEAD_DIM], strides=[stride_seq, 1],
                                           block_shape=[BLOCK_N, HEAD_DIM])
        v_desc = tl.make_tensor_descriptor(v_ptr + base, shape=[seq_len, HEAD_DIM], strides=[stride_seq, 1],
                                           block_shape=[BLOCK_N, HEAD_DIM])
        q = q_desc.load([pid_m * BLOCK_M, 0])
    else:
        q = tl.load(q_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :],
                    mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    if CAUSAL:
        end = tl.minimum((pid_m + 1) * BLOCK_M, seq_len)
        if SPLIT:
            diag = pid_m * BLOCK_M
            acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_desc, v_desc, k_ptr, v_ptr, base, seq_len, qk_scale,
                                        offs_m, offs_d, 0, diag, stride_seq, False, BLOCK_N, HEAD_DIM,
                                        EXP2, KT, DESC, WS, STAGES)
            acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_desc, v_desc, k_ptr, v_ptr, base, seq_len, qk_scale,
                                        offs_m, offs_d, diag, end, stride_seq, True, BLOCK_N, HEAD_DIM,
                                        EXP2, KT, DESC, WS, STAGES)
        else:
            acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_desc, v_desc, k_ptr, v_ptr, base, seq_len, qk_scale,
                                        offs_m, offs_d, 0, end, stride_seq, True, BLOCK_N, HEAD_DIM,
                                        EXP2, KT, DESC, WS, STAGES)
    else:
        acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_desc, v_desc, k_ptr, v_ptr, base, seq_len, qk_scale,
                                    offs_m, offs_d, 0, seq_len, stride_seq, False, BLOCK_N, HEAD_DIM,
                                    EXP2, KT, DESC, WS, STAGES)
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :], out.to(tl.float16),
             mask=offs_m[:, None] < seq_len)


def attention(q, k, v, causal, bm, bn, warps, stages, split=False, exp2=False, kt=False, desc=False, ws=False):
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    scale = 1.0 / math.sqrt(D)
    qk_scale = scale * 1.4426950408889634 if exp2 else scale
    grid = (triton.cdiv(S, bm), B * H)
    attn_kernel[grid](q, k, v, out, S, qk_scale, q.stride(1), q.stride(2), HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn,
                      CAUSAL=causal, SPLIT=split, EXP2=exp2, KT=kt, DESC=desc, WS=ws, STAGES=stages,
                      num_warps=warps)
    return out


# --- GEMM --------------------------------------------------------------------------------------

@triton.jit
def _grouped_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """The tile of program `pid` in grouped order: GROUP_M tile rows share B's tiles in L2."""
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    return first_m + (pid % group) % size_m, (pid % group) // size_m


@triton.jit
def mm_plain(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def mm_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr,
                  FLATTEN: tl.constexpr, WS: tl.constexpr, EPI_SPLIT: tl.constexpr, STAGES: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_M, BLOCK_N // EPI_SPLIT])
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_m * num_n
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=FLATTEN, warp_specialize=WS):
        group = GROUP_M * num_n
        first_m = (tile // group) * GROUP_M
        size_m = tl.minimum(num_m - first_m, GROUP_M)
        pid_m = first_m + (tile % group) % size_m
        pid_n = (tile % group) // size_m
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in tl.range(k_tiles, num_stages=STAGES):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            b = b_desc.load([ki * BLOCK_K, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        if EPI_SPLIT == 2:
            acc = tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2))
            acc = tl.permute(acc, (0, 2, 1))
            c0, c1 = tl.split(acc)
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], c0.to(c_ptr.dtype.element_ty))
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], c1.to(c_ptr.dtype.element_ty))
        else:
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def mm_strided(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * sam + (k + offs_k)[None, :] * sak,
                    mask=(offs_m[:, None] < M) & ((k + offs_k)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + offs_k)[:, None] * sbk + offs_n[None, :] * sbn,
                    mask=((k + offs_k)[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def gemm_strided(a, b, bm, bn, bk, warps, stages, k_major_b=False):
    M, K = a.shape
    N = b.shape[1]
    if k_major_b:
        b = b.t().contiguous().t()   # the same values, K-contiguous; the copy is part of the time
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    mm_strided[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), BLOCK_M=bm, BLOCK_N=bn,
                     BLOCK_K=bk, GROUP_M=8, num_warps=warps, num_stages=stages)
    return c


def gemm_plain(a, b, bm, bn, bk, warps, stages):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    mm_plain[grid](a, b, c, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                   num_warps=warps, num_stages=stages)
    return c


SMS = None


def gemm_persistent(a, b, bm, bn, bk, warps, stages, flatten=False, ws=False, epi=1, per_sm=1):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    progs = min(SMS * per_sm, triton.cdiv(M, bm) * triton.cdiv(N, bn))
    mm_persistent[(progs,)](a, b, c, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                            NUM_SMS=progs, FLATTEN=flatten, WS=ws, EPI_SPLIT=epi, STAGES=stages,
                            num_warps=warps)
    return c


# --- driver ------------------------------------------------------------------------------------

def run_variant(results, group, name, fn, ref, tol, flops, t_end):
    if time.time() > t_end:
        results.append({"group": group, "name": name, "skipped": "time"})
        print(f"{group:10s} {name:44s} skipped (time)", flush=True)
        return
    t0 = time.time()
    try:
        out = fn()
        torch.cuda.synchronize()
        err = (out.float() - ref.float()).abs().max().item()
        ok = torch.allclose(out.float(), ref.float(), atol=tol, rtol=tol)
        t = time_fn(fn, budget_ms=150)
        ms = t["median_ms"]
        rec = {"group": group, "name": name, "ms": ms, "tflops": flops / ms / 1e9, "max_err": err, "ok": bool(ok),
               "wall_s": round(time.time() - t0, 1)}
        print(f"{group:10s} {name:44s} {ms:8.4f} ms {flops / ms / 1e9:7.1f} TFLOP/s  err {err:.2e} "
              f"{'ok' if ok else 'WRONG'}  ({time.time() - t0:.1f} s)", flush=True)
    except Exception as e:  # a variant Triton rejects is a finding, not a failure of the probe
        rec = {"group": group, "name": name, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
        print(f"{group:10s} {name:44s} ERROR {rec['error']}", flush=True)
        traceback.print_exc(limit=2)
    results.append(rec)


def main():
    global SMS
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--only", default="attention,causal,gemm,tf32")
    p.add_argument("--seconds", type=float, default=240)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    triton.set_allocator(_alloc)
    SMS = torch.cuda.get_device_properties(0).multi_processor_count
    t_end = time.time() + a.seconds
    only = a.only.split(",")
    results = []
    g = torch.Generator(device="cuda").manual_seed(0)
    if "attention" in only or "causal" in only:
        B, H, S, D = 4, 32, 2048, 128
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
        for causal in (False, True):
            grp = "causal" if causal else "attention"
            if grp not in only:
                continue
            ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            flops = 4 * B * H * S * S * D / (2 if causal else 1)
            run_variant(results, grp, "vendor SDPA",
                        lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal),
                        ref, 2e-2, flops, t_end)
            feats = [dict(), dict(exp2=True), dict(exp2=True, kt=True), dict(exp2=True, desc=True),
                     dict(exp2=True, desc=True, ws=True)]
            if causal:
                feats += [dict(exp2=True, split=True), dict(exp2=True, desc=True, split=True)]
            base_cfg = (64, 64, 4, 2) if causal else (64, 32, 4, 2)   # what the suite's last run chose
            plan = [(base_cfg, dict())]
            for cfg in ((128, 64, 8, 2), (128, 64, 8, 3), (128, 128, 8, 2)):
                plan += [(cfg, f) for f in ([dict()] if cfg[1] == 128 else []) + feats]
            for ((bm, bn, w, st), f) in plan:
                name = f"{bm}x{bn} w{w} s{st} " + ("+".join(sorted(f)) or "as-written")
                run_variant(results, grp, name,
                            lambda bm=bm, bn=bn, w=w, st=st, f=f: attention(q, k, v, causal, bm, bn, w, st, **f),
                            ref, 2e-2, flops, t_end)
    if "gemm" in only:
        for (dt, M, N, K) in ((torch.float16, 8192, 4096, 4096), (torch.bfloat16, 4096, 14336, 4096)):
            a_ = torch.randn(M, K, device="cuda", dtype=dt, generator=g)
            b_ = torch.randn(K, N, device="cuda", dtype=dt, generator=g)
            ref = torch.matmul(a_, b_)
            flops = 2 * M * N * K
            grp = f"gemm-{str(dt).split('.')[-1]}"
            run_variant(results, grp, "vendor cuBLAS", lambda: torch.matmul(a_, b_), ref, 5e-2, flops, t_end)
            run_variant(results, grp, "plain 128x256x64 w8 s3", lambda: gemm_plain(a_, b_, 128, 256, 64, 8, 3), ref, 5e-2, flops, t_end)
            run_variant(results, grp, "plain 128x256x64 w8 s4", lambda: gemm_plain(a_, b_, 128, 256, 64, 8, 4), ref, 5e-2, flops, t_end)
            plans = (

                    (128, 256, 64, 8, 3, dict()),
                    (128, 256, 64, 8, 4, dict()),
                    (128, 256, 64, 8, 3, dict(epi=2)),
                    (128, 256, 64, 8, 3, dict(flatten=True)),
                    (128, 256, 64, 8, 3, dict(flatten=True, epi=2)),
                    (128, 128, 64, 4, 4, dict(ws=True)),
                    (128, 256, 64, 8, 3, dict(ws=True)),
                    (128, 256, 64, 8, 3, dict(ws=True, flatten=True)),
                    (128, 256, 64, 8, 3, dict(ws=True, epi=2)),
                    (128, 128, 64, 8, 4, dict(per_sm=2)),
            )
            if dt == torch.bfloat16:
                plans = [pl for pl in plans if pl[5] in (dict(), dict(ws=True), dict(flatten=True, epi=2))]
            for (bm, bn, bk, w, st, kw) in plans:
                name = f"persistent {bm}x{bn}x{bk} w{w} s{st} " + ("+".join(f"{k}={v}" for k, v in sorted(kw.items())) or "")
                run_variant(results, grp, name,
                            lambda bm=bm, bn=bn, bk=bk, w=w, st=st, kw=kw: gemm_persistent(a_, b_, bm, bn, bk, w, st, **kw),
                            ref, 5e-2, flops, t_end)
    if "tf32" in only:
        M = N = K = 4096
        a_ = torch.randn(M, K, device="cuda", dtype=torch.float32, generator=g)
        b_ = torch.randn(K, N, device="cuda", dtype=torch.float32, generator=g)
        ref = a_.double() @ b_.double()
        flops = 2 * M * N * K
        torch.backends.cuda.matmul.allow_tf32 = True
        run_variant(results, "tf32", "vendor cuBLAS TF32", lambda: torch.matmul(a_, b_), ref, 0.3, flops, t_end)
        for (bm, bn, bk, w, st) in ((64, 128, 32, 2, 3), (128, 128, 32, 4, 3), (128, 128, 32, 8, 3),
                                    (128, 256, 32, 8, 3), (128, 128, 64, 8, 3)):
            for kmaj in (False, True):
                name = f"{bm}x{bn}x{bk} w{w} s{st} B " + ("K-major copy" if kmaj else "as given")
                run_variant(results, "tf32", name,
                            lambda bm=bm, bn=bn, bk=bk, w=w, st=st, kmaj=kmaj: gemm_strided(a_, b_, bm, bn, bk, w, st,
                                                                                           kmaj),
                            ref, 0.3, flops, t_end)
    meta = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with open(os.path.join(a.out, "probe.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    print(json.dumps(meta))


if __name__ == "__main__":
    main()

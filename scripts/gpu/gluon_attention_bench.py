#!/usr/bin/env python3
"""Times the Gluon attention template against each SDPA backend (cuDNN attention,
FlashAttention-2, memory-efficient), with and without its log-sum-exp output, timed like bench/run (CUDA events, L2 flushed, medians),
each output checked against SDPA with the suite's attention tolerance.

    python3 scripts/gpu/gluon_attention_bench.py [CASE_INDEX ...]
    python3 scripts/gpu/gluon_attention_bench.py --schedules [--basic] [--before OLD_TEMPLATE.py] [CASE_INDEX ...]

Prints one line per case and route. With --schedules, times the template's schedules against
each other instead (ping-pong between the consumer groups, a causal head's longest tiles first,
persistent programs, three consumer groups for head sizes up to 64), with SDPA's backends (and another version of the template, --before)
interleaved in rounds in this one process, each schedule's output checked against SDPA, with the
ratio of each to the one-tile schedule; --basic times only one tile per program against
persistent programs (and two against three consumer groups), fewer kernels to compile. Needs torch, Triton 3.6 with Gluon, an sm_90 GPU.
"""

import importlib.util
import os
import sys
import time

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib.measure import time_fn  # noqa: E402
from benchlib.vendors import SDPA_BACKENDS  # noqa: E402

CASES = [  # B, HQ, HKV, S, D, causal
    (4, 32, 32, 2048, 128, False), (4, 32, 32, 2048, 128, True), (4, 32, 8, 2048, 128, False),
    (4, 32, 8, 2048, 128, True), (4, 32, 32, 2048, 64, False), (4, 32, 32, 4096, 128, True),
    (2, 16, 16, 1000, 128, True), (4, 16, 16, 2048, 256, False), (4, 16, 16, 2048, 256, True),
]


def main():
    spec = importlib.util.spec_from_file_location(
        "gluon_attention", os.path.join(ROOT, "src", "transform", "passes", "templates", "gluon_attention.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import triton
    from torch.nn.attention import SDPBackend, sdpa_kernel
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__,
          time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), flush=True)
    args = sys.argv[1:]
    before = None
    if "--before" in args:  # another version of the template, timed beside this one
        path = args.pop(args.index("--before") + 1)
        args.remove("--before")
        spec_b = importlib.util.spec_from_file_location("gluon_attention_before", path)
        before = importlib.util.module_from_spec(spec_b)
        spec_b.loader.exec_module(before)
    schedules = "--schedules" in args
    basic = "--basic" in args
    picked = [CASES[int(i)] for i in args if not i.startswith("--")] or CASES
    if schedules:
        for case in picked:
            compare_schedules(mod, *case, before=before, basic=basic)
        return
    for (B, HQ, HKV, S, D, causal) in picked:
        g = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(B, HQ, S, D, device="cuda", dtype=torch.float16, generator=g)
        k = torch.randn(B, HKV, S, D, device="cuda", dtype=torch.float16, generator=g)
        v = torch.randn(B, HKV, S, D, device="cuda", dtype=torch.float16, generator=g)
        sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,  # noqa: E731
                                                                        enable_gqa=HQ != HKV)
        ref = sdpa()
        flops = 4 * B * HQ * S * S * D * (0.5 if causal else 1.0)
        line, fastest = f"B={B} HQ={HQ} HKV={HKV} S={S} D={D} causal={causal}:", None
        for name, member in SDPA_BACKENDS:
            try:
                with sdpa_kernel([getattr(SDPBackend, member)]):
                    sdpa()
                    t = time_fn(sdpa)["median_ms"]
                fastest = t if fastest is None else min(fastest, t)
                line += f" {name}={t:.4f}"
            except Exception:  # a backend that cannot run the case (GQA, this GPU) is skipped
                line += f" {name}=n/a"
        o = torch.empty_like(q)
        scale = D ** -0.5
        launched = mod.launch(q, k, v, o, scale, causal)
        torch.cuda.synchronize()
        ok = torch.allclose(o.float(), ref.float(), rtol=1e-2, atol=2e-3)
        t = time_fn(lambda: mod.launch(q, k, v, o, scale, causal))["median_ms"]
        lse = torch.empty(B, HQ, S, device="cuda", dtype=torch.float32)
        t_lse = time_fn(lambda: mod.launch(q, k, v, o, scale, causal, lse=lse))["median_ms"]
        print(line, flush=True)
        print(f"  gluon route={'gluon' if launched is not False else 'refused'} {t:.4f} ms "
              f"{flops / t / 1e9:.0f} TFLOP/s = {fastest / t:.3f} of the fastest SDPA backend; matches: {ok}; "
              f"with the log-sum-exp output {t_lse:.4f} ms",
              flush=True)


def compare_schedules(mod, B, HQ, HKV, S, D, causal, rounds=5, before=None, basic=False):
    """The template's schedules timed in interleaved rounds (median over rounds of each's median);
    `before`: another version of the template (a module), timed as "before" in the same rounds;
    `basic`: neither ping-pong nor heaviest-first."""
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(B, HQ, S, D, device="cuda", dtype=torch.float16, generator=g)
    k = torch.randn(B, HKV, S, D, device="cuda", dtype=torch.float16, generator=g)
    v = torch.randn(B, HKV, S, D, device="cuda", dtype=torch.float16, generator=g)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=HQ != HKV)
    scale = D ** -0.5
    # (pingpong, heavy_first, persistent, groups); heavy_first only matters causal, three
    # consumer groups are taken up to a head size of 64
    names = [(pp, hf, ps, gr) for pp in ((False,) if basic else (False, True))
             for hf in ((False, True) if causal and not basic else (False,))
             for ps in (False, True) for gr in ((2, 3) if D <= 64 else (2,))]
    runs = {n: (lambda n=n, o=o: mod.launch(q, k, v, o, scale, causal, pingpong=n[0], heavy_first=n[1],
                                            persistent=n[2], groups=n[3]))
            for n in names for o in [torch.empty_like(q)]}
    if before is not None:
        ob = torch.empty_like(q)
        runs["before"] = lambda: before.launch(q, k, v, ob, scale, causal)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for name, member in SDPA_BACKENDS:  # the vendor's backends, timed in the same rounds
        def vendor(member=member):
            with sdpa_kernel([getattr(SDPBackend, member)]):
                return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                        enable_gqa=HQ != HKV)
        try:
            vendor()
            runs[name] = vendor
        except Exception:  # a backend that cannot run the case is left out
            pass
    for run in runs.values():  # compiled and warm before any timing
        run()
    torch.cuda.synchronize()
    times = {n: [] for n in runs}
    order = list(runs)
    for r in range(rounds):
        for n in (order if r % 2 == 0 else order[::-1]):
            times[n].append(time_fn(runs[n], budget_ms=150)["median_ms"])
    ok = {}
    for n in names:  # each schedule's output, written by a fresh launch, against SDPA
        o = torch.full_like(q, float("nan"))
        mod.launch(q, k, v, o, scale, causal, pingpong=n[0], heavy_first=n[1], persistent=n[2], groups=n[3])
        torch.cuda.synchronize()
        ok[n] = torch.allclose(o.float(), ref.float(), rtol=1e-2, atol=2e-3)
    med = {n: sorted(ts)[len(ts) // 2] for n, ts in times.items()}
    base = med[(False, False, False, 2)]
    flops = 4 * B * HQ * S * S * D * (0.5 if causal else 1.0)
    print(f"B={B} HQ={HQ} HKV={HKV} S={S} D={D} causal={causal}:", flush=True)
    for n in runs:
        label = n if isinstance(n, str) else f"pingpong={n[0]} heavy_first={n[1]} persistent={n[2]} groups={n[3]}"
        print(f"  {label}: {med[n]:.4f} ms {flops / med[n] / 1e9:.0f} TFLOP/s = {base / med[n]:.3f}x the default; "
              f"rounds {' '.join(f'{t:.4f}' for t in times[n])}; matches: {ok.get(n, '-')}", flush=True)


if __name__ == "__main__":
    main()

"""Figures derived from the measurements (speed-ups, % of roofline, the summary against the
issue's targets) and the Markdown table. Pure Python, no torch."""

import math
import statistics

MATMUL_LIKE_TARGET = 0.95      # within 5% of the vendor library
MEMORY_BOUND_TARGET = 0.85     # of the measured DRAM bandwidth
NOT_SLOWER_SLACK = 1.02        # "never slower": tritonforge's time within 2% of the kernel as written


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def roofline_ms(flops, nbytes, peak, ceilings):
    """The least time the case can take on this GPU: bytes at the measured DRAM bandwidth, and
    for matmul-like kernels also FLOPs at the vendor's measured matmul rate of `peak`'s dtype."""
    if not ceilings:
        return None
    bw = ceilings.get("dram_bytes_per_s")
    times = []
    if nbytes and bw:
        times.append(nbytes / bw)
    rate = (ceilings.get("matmul_flops_per_s") or {}).get(peak) if peak else None
    if flops and rate:
        times.append(flops / rate)
    return max(times) * 1e3 if times else None


def _ms(rec):
    return rec.get("ms") if isinstance(rec, dict) and rec.get("status") == "ok" else None


def _verified_ms(rec):
    ms = _ms(rec)
    return ms if ms is not None and (rec.get("verify") or {}).get("passed") else None


TF_RESULTS = ("improved", "unchanged")


def derive(entry, ceilings):
    """Adds per-case and per-kernel figures to a kernel entry in place.

    A speed-up is counted only for a verified result. When tritonforge handed the kernel back
    unchanged, its time is the kernel's as written; when it failed (error, timeout, no GPU),
    the table shows no time and the geometric mean counts 1.0 for it (the user got the kernel
    back as written), and the entry says so."""
    peak = entry.get("peak")
    tf = entry.get("tritonforge") or {}
    for case in entry.get("cases", []):
        roof = roofline_ms(case.get("flops"), case.get("bytes"), peak, ceilings)
        case["roofline_ms"] = roof
        base = _verified_ms(case.get("baseline"))
        if "tritonforge" not in case and tf.get("status") == "unchanged" and case.get("baseline"):
            case["tritonforge"] = dict(case["baseline"], note="unchanged: the kernel as written")
        others = [(f"vendors.{n}", r) for n, r in (case.get("vendors") or {}).items()]
        for key, rec in [(k, case.get(k)) for k in ("baseline", "tritonforge", "autotune", "vendor")] + others:
            ms = _ms(rec)
            if ms is None:
                continue
            if roof:
                rec["roofline_pct"] = 100.0 * roof / ms
            if base and (key.startswith("vendor") or _verified_ms(rec) is not None):
                rec["speedup"] = base / ms
            if case.get("bytes"):
                rec["bytes_per_s"] = case["bytes"] / (ms * 1e-3)
            if case.get("flops") and peak:
                rec["flops_per_s"] = case["flops"] / (ms * 1e-3)
    agg = {}
    for key in ("tritonforge", "autotune", "vendor"):
        agg[key] = geomean([c.get(key, {}).get("speedup") for c in entry.get("cases", [])])
    entry["tritonforge_failed"] = tf.get("status") not in TF_RESULTS
    if entry["tritonforge_failed"]:
        agg["tritonforge"] = 1.0
    entry["speedup"] = agg
    return entry


def summary(kernels):
    """The issue's targets, from every finished kernel."""
    done = [k for k in kernels.values() if k.get("status") == "done"]
    s = {"kernels": len(done)}
    s["geomean_speedup_tritonforge"] = geomean([k["speedup"].get("tritonforge") for k in done])
    s["geomean_speedup_autotune"] = geomean([k["speedup"].get("autotune") for k in done])
    walls = [k["tritonforge"].get("wall_s") for k in done if k.get("tritonforge", {}).get("wall_s") is not None]
    s["median_tritonforge_wall_s"] = statistics.median(walls) if walls else None
    tunes = [c["autotune"]["tuning_s"] for k in done for c in k["cases"] if c.get("autotune", {}).get("tuning_s")]
    s["median_autotune_tuning_s"] = statistics.median(tunes) if tunes else None
    s["tritonforge_failed"] = [k["name"] for k in done if k.get("tritonforge_failed")]
    vs_vendor, mem, slower = [], [], []
    for k in done:
        for c in k["cases"]:
            tf = _verified_ms(c.get("tritonforge"))
            base = _verified_ms(c.get("baseline"))
            vend = _ms(c.get("vendor"))
            if tf is None:
                continue
            if k.get("peak") and vend:
                vs_vendor.append({"kernel": k["name"], "vendor_over_tritonforge": vend / tf,
                                  "met": vend / tf >= MATMUL_LIKE_TARGET})
            if not k.get("peak") and c["tritonforge"].get("roofline_pct") is not None:
                pct = c["tritonforge"]["roofline_pct"]
                mem.append({"kernel": k["name"], "dram_pct": pct, "met": pct >= 100 * MEMORY_BOUND_TARGET})
            if base and tf > base * NOT_SLOWER_SLACK:
                slower.append({"kernel": k["name"], "ratio": tf / base})
    s["compute_bound_vs_vendor"] = vs_vendor
    s["memory_bound_dram"] = mem
    s["slower_than_written"] = slower
    s["targets"] = {
        "geomean_speedup_at_least_2x": s["geomean_speedup_tritonforge"] is not None and s["geomean_speedup_tritonforge"] >= 2.0,
        "compute_bound_within_5pct_of_vendor": f"{sum(x['met'] for x in vs_vendor)}/{len(vs_vendor)}",
        "memory_bound_at_85pct_dram": f"{sum(x['met'] for x in mem)}/{len(mem)}",
        "never_slower_than_written": not slower,
        "median_wall_at_most_60s": s["median_tritonforge_wall_s"] is not None and s["median_tritonforge_wall_s"] <= 60,
    }
    return s


def _f(x, fmt="{:.3f}", none="–"):
    return none if x is None else fmt.format(x)


def vendor_label(k, v):
    """The vendor column: the implementation that was fastest where the harness timed several
    (the record's "name"), else the harness's VENDOR."""
    return (v or {}).get("name") or k.get("vendor_name") or ""


def other_vendors(c):
    """"name 1.234 ms, name error, ..." for the implementations of a case's "vendors" other than
    the one in its vendor column; "" where there are none."""
    chosen = (c.get("vendor") or {}).get("name")
    parts = []
    for name, rec in (c.get("vendors") or {}).items():
        if name == chosen:
            continue
        if rec.get("status") != "ok":
            parts.append(f"{name} error")
        else:
            bad = " (!)" if rec.get("verify") and not rec["verify"].get("passed") else ""
            parts.append(f"{name} {_f(_ms(rec))} ms{bad}")
    return ", ".join(parts)


def markdown(doc):
    env = doc.get("environment", {})
    gpu = env.get("gpu") or {}
    ceil = doc.get("ceilings") or {}
    lines = ["# tritonforge benchmark suite: results", ""]
    lines.append(f"- date: {doc.get('updated', '?')} (runs: {', '.join(r.get('date', '?') for r in doc.get('runs', []))})")
    lines.append(f"- GPU: {gpu.get('name', 'none')} (sm {gpu.get('capability', '?')}, {gpu.get('sms', '?')} SMs), "
                 f"driver {env.get('driver', '?')}, CUDA {env.get('cuda_runtime', '?')}, cuDNN {env.get('cudnn', '?')}")
    lines.append(f"- torch {env.get('torch', '?')}, triton {env.get('triton', '?')}, python {env.get('python', '?')}, "
                 f"{doc.get('tritonforge_version') or 'tritonforge ?'}")
    mm = ceil.get("matmul_flops_per_s") or {}
    if ceil.get("dram_bytes_per_s"):
        lines.append(f"- roofline (measured): DRAM {ceil['dram_bytes_per_s'] / 1e12:.2f} TB/s (device copy); cuBLAS "
                     + ", ".join(f"{k} {v / 1e12:.0f} TFLOP/s" for k, v in mm.items()))
    args = doc.get("args", {})
    lines.append(f"- tritonforge effort {args.get('effort', 'default')}, budget per kernel: up to "
                 f"{args.get('budget', '?')} s (each kernel's own in brackets: "
                 "less when the run's deadline required it); times are medians of CUDA-event timings with the L2 flushed before each call")
    lines.append("")
    lines.append("| kernel | case | as written ms | tritonforge ms | speed-up | % roofline | tf wall s (budget) | candidates "
                 "| autotune ms | speed-up | tuning s | vendor | vendor ms | vendor / tf |")
    lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
    for name, k in doc.get("kernels", {}).items():
        if k.get("status") != "done":
            lines.append(f"| {name} | – | {k.get('status', '?')}: {str(k.get('error', ''))[:120]} |" + " |" * 11)
            continue
        tf = k.get("tritonforge", {})
        for c in k["cases"]:
            label = ",".join(f"{a}={b}" for a, b in c["case"].items())
            b, t, a, v = (c.get(x, {}) for x in ("baseline", "tritonforge", "autotune", "vendor"))
            tfms, vms = _ms(t), _ms(v)
            cand = tf.get("evaluated")
            tf_note = "" if tf.get("status") in TF_RESULTS else f" ({tf.get('status', '?')})"
            if t and t.get("verify") and not t["verify"].get("passed"):
                tf_note += " (wrong result)"
            budget = f" ({tf['budget_s']:g})" if tf.get("budget_s") is not None else ""
            v_note = " (!)" if v.get("verify") and not v["verify"].get("passed") else ""
            lines.append(
                f"| {name} | {label} | {_f(_ms(b))} | {_f(tfms)}{tf_note} | {_f(t.get('speedup'), '{:.2f}x')} "
                f"| {_f(t.get('roofline_pct'), '{:.0f}%')} | {_f(tf.get('wall_s'), '{:.1f}')}{budget} | {_f(cand, '{}')} "
                f"| {_f(_ms(a))} | {_f(a.get('speedup'), '{:.2f}x')} | {_f(a.get('tuning_s'), '{:.1f}')} "
                f"| {vendor_label(k, v)} | {_f(vms)}{v_note} | {_f(vms / tfms if vms and tfms else None, '{:.2f}')} |")
    backends = []
    for name, k in doc.get("kernels", {}).items():
        for c in k.get("cases", []) if k.get("status") == "done" else []:
            others = other_vendors(c)
            if others:
                label = ",".join(f"{a}={b}" for a, b in c["case"].items())
                backends.append(f"- {name} ({label}): {vendor_label(k, c.get('vendor'))} in the table; also {others}")
    if backends:
        lines += ["", "Vendor backends: each one timed alike, the fastest verified one compared.", ""] + backends
    made = []
    for name, k in doc.get("kernels", {}).items():
        tf = k.get("tritonforge", {})
        if k.get("status") != "done" or tf.get("status") != "improved":
            continue
        # "pass B (P5) on pass A on base 0": B stacked on a tie of A; both are in the source.
        passes = [(p.split(" on pass ")[1].split(" on base")[0] + " + " if " on pass " in p else "")
                  + p.split(" (")[0].removeprefix("pass ") for p in tf.get("passes") or []]
        changes = tf.get("best_changes") or {}
        config = " ".join(f"{a.split('.', 1)[-1]}={b}" for a, b in sorted(changes.items()))
        made.append(f"- {name}: " + (f"passes {' -> '.join(passes)}" if passes else "no pass")
                    + (f"; {config}" if config else ""))
    if made:
        lines += ["", "## What made each result", "", "Passes the loop kept, in the order it stacked them, then the "
                  "parameters of the best candidate (result.json of each kernel has the trace).", ""] + made
    s = doc.get("summary") or {}
    if s:
        lines += ["", "## Against the targets", ""]
        lines.append(f"- geometric-mean speed-up over the kernels as written: tritonforge "
                     f"{_f(s.get('geomean_speedup_tritonforge'), '{:.2f}x')}, @triton.autotune "
                     f"{_f(s.get('geomean_speedup_autotune'), '{:.2f}x')} (target 2x) over {s.get('kernels')} kernels")
        lines.append(f"- median optimization wall time: tritonforge {_f(s.get('median_tritonforge_wall_s'), '{:.1f}')} s "
                     f"(target 60 s); autotune tuning {_f(s.get('median_autotune_tuning_s'), '{:.1f}')} s")
        vv = s.get("compute_bound_vs_vendor") or []
        lines.append("- compute-bound kernels, vendor time / tritonforge time (target >= 0.95): "
                     + (", ".join(f"{x['kernel']} {x['vendor_over_tritonforge']:.2f}" for x in vv) or "–"))
        mem = s.get("memory_bound_dram") or []
        lines.append("- memory-bound kernels, % of measured DRAM bandwidth (target 85%): "
                     + (", ".join(f"{x['kernel']} {x['dram_pct']:.0f}%" for x in mem) or "–"))
        if s.get("tritonforge_failed"):
            lines.append("- tritonforge failed (counted as 1.0x): " + ", ".join(s["tritonforge_failed"]))
        sl = s.get("slower_than_written") or []
        lines.append("- slower than the kernel as written (by more than 2%): "
                     + (", ".join(f"{x['kernel']} {x['ratio']:.2f}x the time" for x in sl) or "none"))
    lines.append("")
    lines.append("(!): the vendor's output is outside the task's tolerance (it rounds differently); its time is shown.")
    lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# The real corpus (bench/real/): kernels as their authors wrote them, tritonforge's result,
# the vendor op where the harness names one. No autotune column: many of these kernels carry
# their authors' own @triton.autotune already.


def _what_won(tf):
    """Parameters, or which pass, from tritonforge's record of a kernel."""
    status = tf.get("status")
    if status == "improved":
        origin = tf.get("best_origin") or ""
        dispatch = tf.get("dispatch")
        if dispatch:
            routes = "; ".join(f"{b.get('lo')}..{b.get('hi')}: {b.get('runs')}" for b in dispatch.get("buckets") or [])
            return f"per-shape on {dispatch.get('feature')}: {routes}"
        changes = tf.get("best_changes")
        if changes is not None:
            params = [k.split(".", 1)[-1] for k in changes]
            # The kernel's name only where two kernels share a parameter's name.
            config = " ".join(f"{k if params.count(k.split('.', 1)[-1]) > 1 else k.split('.', 1)[-1]}={v}"
                              for k, v in sorted(changes.items()))
        else:
            config = tf.get("best_config") or ""
        if origin.startswith("pass "):
            return f"{origin}" + (f" + {config}" if config and config != "as-written" else "")
        return config or "?"
    if status == "unchanged":
        return "nothing beat the kernel as written"
    if status == "skipped":
        return "tritonforge not run"
    return f"{status or '?'}"


def real_summary(kernels):
    done = [k for k in kernels.values() if k.get("status") == "done"]
    s = {"kernels": len(done)}
    accepted = [k for k in done if k.get("tritonforge", {}).get("status") in TF_RESULTS]
    s["accepted"] = [k["name"] for k in accepted]
    s["refused"] = {k["name"]: (k.get("tritonforge") or {}).get("refusal") or (k.get("tritonforge") or {}).get("error")
                    or (k.get("tritonforge") or {}).get("status")
                    for k in done if k not in accepted and (k.get("tritonforge") or {}).get("status") != "skipped"}
    s["not_run"] = [k["name"] for k in done if (k.get("tritonforge") or {}).get("status") == "skipped"]
    s["geomean_speedup_accepted"] = geomean([k["speedup"].get("tritonforge") for k in accepted])
    s["geomean_speedup_all"] = geomean([k["speedup"].get("tritonforge") for k in done])
    walls = [k["tritonforge"].get("wall_s") for k in accepted if k["tritonforge"].get("wall_s") is not None]
    s["median_tritonforge_wall_s"] = statistics.median(walls) if walls else None
    s["as_written_wrong"] = [k["name"] for k in done for c in k["cases"]
                             if c.get("baseline") and _verified_ms(c["baseline"]) is None]
    s["slower_than_written"] = [{"kernel": k["name"], "ratio": _verified_ms(c["tritonforge"]) / _verified_ms(c["baseline"])}
                                for k in accepted for c in k["cases"]
                                if _verified_ms(c.get("tritonforge")) and _verified_ms(c.get("baseline"))
                                and _verified_ms(c["tritonforge"]) > _verified_ms(c["baseline"]) * NOT_SLOWER_SLACK]
    return s


def half_summary(kernels, names):
    """One half of the corpus (bench/benchlib/split.py): how many kernels it has, how many were
    measured, the geometric-mean speed-up over the measured ones (a refusal counts 1.0, as in
    real_summary's "all") and which were faster than as written by more than the 2% slack."""
    done = [kernels[n] for n in names if (kernels.get(n) or {}).get("status") == "done"]
    faster = [k["name"] for k in done if (k.get("speedup") or {}).get("tritonforge")
              and k["speedup"]["tritonforge"] > NOT_SLOWER_SLACK]
    return {"kernels": len(names), "measured": len(done),
            "errors": [n for n in names if n in kernels and kernels[n].get("status") != "done"],
            "not_measured": [n for n in names if n not in kernels],
            "geomean_speedup": geomean([(k.get("speedup") or {}).get("tritonforge") for k in done]),
            "faster": faster}


def half_line(half, s):
    """The summary line of one half's table."""
    line = (f"{half} half: {s['kernels']} kernels, {s['measured']} measured on the GPU"
            + (f", {len(s['errors'])} with an error" if s["errors"] else "")
            + (f", {len(s['not_measured'])} not measured yet" if s["not_measured"] else ""))
    if not s["measured"]:
        return line + "; no speed-up yet"
    return (line + f"; geometric-mean speed-up over the kernels as written {_f(s['geomean_speedup'], '{:.2f}x')} "
            f"(over the {s['measured']} measured; a refusal counts 1.0); faster by more than 2%: "
            f"{len(s['faster'])} of {s['measured']}")


HALF_HEADINGS = {
    "tuning": "Tuning half: rules, priors and passes are developed on these kernels",
    "evaluation": "Evaluation half: held out, run to report and never to decide what tritonforge does",
}


def _case_rows(name, k):
    """The per-case rows of one kernel in the real corpus's table."""
    if k is None:
        return [f"| {name} | – | not measured yet |" + " |" * 7]
    if k.get("status") != "done":
        return [f"| {name} | – | {k.get('status', '?')}: {str(k.get('error', ''))[:160]} |" + " |" * 7]
    rows = []
    tf = k.get("tritonforge", {})
    won = _what_won(tf).replace("|", "/")
    for c in k["cases"]:
        label = ",".join(f"{a}={b}" for a, b in c["case"].items())
        b, t, v = (c.get(x) or {} for x in ("baseline", "tritonforge", "vendor"))
        b_note = "" if not b.get("verify") or b["verify"].get("passed") else " (wrong)"
        if b.get("status") == "error":
            b_note = " (error)"
        t_note = " (wrong)" if t.get("verify") and not t["verify"].get("passed") else ""
        roof = f"{_f(b.get('roofline_pct'), '{:.0f}%')} → {_f(t.get('roofline_pct'), '{:.0f}%')}"
        v_note = " (!)" if v.get("verify") and not v["verify"].get("passed") else ""
        rows.append(
            f"| {name} | {label} | {_f(_ms(b))}{b_note} | {_f(_ms(t))}{t_note} | {_f(t.get('speedup'), '{:.2f}x')} "
            f"| {roof} | {_f(tf.get('wall_s'), '{:.1f}')} | {won} | {vendor_label(k, v) or '–'} "
            f"| {_f(_ms(v))}{v_note} |")
    return rows


def real_markdown(doc, halves=None):
    """The real corpus's results page. With `halves` ({kernel name: "tuning" | "evaluation"},
    every kernel of the manifest in its order; bench/benchlib/split.py), one table per half, each
    with its summary line, and the kernels not measured yet listed as such; without, one table
    of the measured kernels."""
    env = doc.get("environment", {})
    gpu = env.get("gpu") or {}
    ceil = doc.get("ceilings") or {}
    lines = ["# tritonforge on real kernels (bench/real/): results", ""]
    lines.append(f"- date: {doc.get('updated', '?')} (runs: {', '.join(r.get('date', '?') for r in doc.get('runs', []))})")
    lines.append(f"- GPU: {gpu.get('name', 'none')} (sm {gpu.get('capability', '?')}, {gpu.get('sms', '?')} SMs), "
                 f"driver {env.get('driver', '?')}, CUDA {env.get('cuda_runtime', '?')}")
    lines.append(f"- torch {env.get('torch', '?')}, triton {env.get('triton', '?')}, python {env.get('python', '?')}, "
                 f"{doc.get('tritonforge_version') or 'tritonforge ?'}")
    mm = ceil.get("matmul_flops_per_s") or {}
    if ceil.get("dram_bytes_per_s"):
        lines.append(f"- roofline (measured): DRAM {ceil['dram_bytes_per_s'] / 1e12:.2f} TB/s (device copy); cuBLAS "
                     + ", ".join(f"{k} {v / 1e12:.0f} TFLOP/s" for k, v in mm.items()))
    args = doc.get("args", {})
    lines.append(f"- tritonforge budget per kernel: up to {args.get('budget', '?')} s; sources laid out from "
                 f"bench/real/manifest.toml (sha256 {str(doc.get('manifest_sha256', '?'))[:12]}); times are medians "
                 "of CUDA-event timings with the L2 flushed before each call")
    if halves:
        lines.append("- two halves, fixed by a hash of each kernel's source file (bench/benchlib/split.py: sha256 of "
                     "its git blob id and task name); the tuning half is where tritonforge's rules, priors and "
                     "passes are developed, the evaluation half is held out")
    header = ["| kernel | case | as written ms | tritonforge ms | speed-up | % roofline (written → tf) "
              "| tf wall s | what won | vendor | vendor ms |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |"]
    kernels = doc.get("kernels", {})
    if halves:
        for half in ("tuning", "evaluation"):
            names = [n for n, h in halves.items() if h == half]
            lines += ["", f"## {HALF_HEADINGS[half]}", "", "- " + half_line(half, half_summary(kernels, names)), ""]
            lines += header
            for name in names:
                lines += _case_rows(name, kernels.get(name))
        strays = [n for n in kernels if n not in halves]
        if strays:
            lines += ["", "## Measured, no longer in the manifest", ""] + header
            for name in strays:
                lines += _case_rows(name, kernels[name])
    else:
        lines.append("")
        lines += header
        for name, k in kernels.items():
            lines += _case_rows(name, k)
    lines += ["", "## What tritonforge said, per kernel", "",
              "| kernel | half | pattern | tritonforge | tunables tuned / left alone |",
              "| --- | --- | --- | --- | --- |"]
    for name, k in doc.get("kernels", {}).items():
        tf = k.get("tritonforge") or {}
        verdict = tf.get("status", "?")
        why = tf.get("refusal") or tf.get("error")
        if why and verdict not in TF_RESULTS:
            verdict += ": " + str(why)
        tuned = len(tf.get("tunables") or [])
        alone = len(tf.get("tunables_left_alone") or [])
        pattern = str(k.get("pattern", "")).replace("|", "/")
        half = (halves or {}).get(name, "–")
        lines.append(f"| {name} | {half} | {pattern} | {verdict.replace('|', '/')[:400]} | {tuned} / {alone} |")
    s = doc.get("summary") or {}
    if s:
        lines += ["", "## Summary (both halves together)", ""]
        lines.append(f"- kernels measured: {s.get('kernels')}; tritonforge accepted {len(s.get('accepted') or [])}, "
                     f"refused or failed on {len(s.get('refused') or {})}"
                     + (f", not run on {len(s['not_run'])}" if s.get("not_run") else ""))
        lines.append(f"- geometric-mean speed-up over the kernels as written: "
                     f"{_f(s.get('geomean_speedup_accepted'), '{:.2f}x')} over the accepted ones, "
                     f"{_f(s.get('geomean_speedup_all'), '{:.2f}x')} over all (a refusal counts 1.0)")
        lines.append(f"- median tritonforge wall time (accepted): {_f(s.get('median_tritonforge_wall_s'), '{:.1f}')} s")
        if s.get("as_written_wrong"):
            lines.append("- the kernel as written failed its own check on: " + ", ".join(sorted(set(s["as_written_wrong"]))))
        sl = s.get("slower_than_written") or []
        lines.append("- slower than the kernel as written (by more than 2%): "
                     + (", ".join(f"{x['kernel']} {x['ratio']:.2f}x the time" for x in sl) or "none"))
    runs = doc.get("runs") or []
    if len(runs) > 1:
        lines += ["", "## Runs", "", "| date | tritonforge | budget s | kernels |", "| --- | --- | ---: | --- |"]
        for r in runs:
            lines.append(f"| {r.get('date', '?')} | {r.get('tritonforge') or '?'} | {(r.get('args') or {}).get('budget', '?')} "
                         f"| {', '.join(r.get('kernels') or [])} |")
    lines.append("")
    lines.append("(wrong): outside the task's tolerance; (!): the vendor's output is outside it (it rounds differently).")
    lines.append("")
    return "\n".join(lines)

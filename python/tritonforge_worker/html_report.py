"""report.html for `tritonforge optimize`, and results.html for bench/run: one self-contained
file each (figures inlined as base64 PNG, the styles in the page; no script, nothing fetched).

  python -m tritonforge_worker.html_report optimize RESULT.json [--diff FILE] -o report.html
  python -m tritonforge_worker.html_report bench RESULTS.json -o results.html
  python -m tritonforge_worker.html_report capture CAPTURE.json -o report.html

The C++ report step runs the first through the worker's Python after report.md is written
(src/report/html_report.cpp); bench/run calls bench_html() itself. The figures need matplotlib;
without it the page is written all the same, without figures, and says why. Everything comes
from the JSON (docs/result-schema.md): the candidates' wall times from the trace's `candidate`
events, the roofline ceilings from its `roofline` event, each case's work (flops, bytes) from
the measurements of the kernel as written.
"""

import argparse
import base64
import html
import io
import json
import math
import os
import sys

PALETTE = {"written": "#8c8c8c", "best": "#1f77b4", "vendor": "#d62728", "autotune": "#ff7f0e",
           "failed": "#d62728", "candidate": "#7f9fbf", "regressed": "#c9c9c9"}

STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px auto; max-width: 1100px;
       color: #222; background: #fff; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ddd; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.6em 0; } th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
th { background: #f3f5f7; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.meta { color: #555; } .big { font-size: 1.3em; font-weight: bold; color: #1f5fa0; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 6px 10px; margin: 0.6em 0; }
figure { margin: 0.8em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
pre.diff { background: #fafafa; border: 1px solid #ddd; padding: 8px; overflow-x: auto; font-size: 0.85em; }
pre.diff .add { background: #e6ffec; color: #116329; display: block; }
pre.diff .del { background: #ffebe9; color: #82071e; display: block; }
pre.diff .hunk { color: #6f42c1; display: block; }
ul.decisions li { margin: 0.2em 0; } code { background: #f3f3f3; padding: 0 3px; }
"""


def esc(x):
    return html.escape("" if x is None else str(x))


def _num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def fmt_ms(x):
    return f"{x:.4f}" if _num(x) else "–"


# ---------------------------------------------------------------------------------------
# Figures


class Figures:
    """matplotlib when it can be imported (the Agg backend: no display needed); otherwise
    `why` says what is missing and every figure is None."""

    def __init__(self):
        self.plt = None
        self.why = None
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            self.plt = plt
        except Exception as exc:  # ImportError, or a broken install
            self.why = (f"matplotlib could not be imported by {sys.executable} ({type(exc).__name__}: {exc}); "
                        "install it (pip install matplotlib) to get the figures")

    def new(self, w=9.0, h=4.0):
        fig, ax = self.plt.subplots(figsize=(w, h), dpi=100)
        return fig, ax

    def inline(self, fig, caption):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight", metadata={"Software": None})
        self.plt.close(fig)
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        return (f'<figure><img alt="{esc(caption)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{esc(caption)}</figcaption></figure>")


def progress_points(result):
    """(t, speed-up or None, status, accepted) per candidate from the trace's candidate events:
    the speed-up over the kernel as written (1 / objective), accepted when the candidate
    verified and was slower on no case (only those can become the best)."""
    pts = []
    for e in result.get("trace") or []:
        if e.get("kind") != "candidate":
            continue
        d = e.get("data") or {}
        obj = d.get("objective")
        sp = 1.0 / obj if _num(obj) and obj > 0 else None
        ok = d.get("status") == "ok"
        pts.append((float(e.get("t") or 0), sp if ok else None, d.get("status", "?"),
                    ok and sp is not None and not d.get("regressed_cases")))
    return pts


def best_so_far(points):
    """[(t, best speed-up)] stepping up at each accepted candidate that beat the best."""
    best, steps = 1.0, []
    for t, sp, _, accepted in sorted(points, key=lambda p: p[0]):
        if accepted and sp > best:
            best = sp
            steps.append((t, best))
    return steps


def progress_figure(figs, result):
    pts = progress_points(result)
    if not pts:
        return None
    fig, ax = figs.new(9, 3.8)
    ok = [(t, sp) for t, sp, _, acc in pts if acc]
    reg = [(t, sp) for t, sp, st, acc in pts if sp is not None and not acc]
    bad = [t for t, sp, st, _ in pts if sp is None and st not in ("not-run", "pruned")]
    if reg:
        ax.scatter(*zip(*reg), s=14, color=PALETTE["regressed"], label="slower than as written on a case")
    if ok:
        ax.scatter(*zip(*ok), s=16, color=PALETTE["candidate"], label="candidate")
    ys = [sp for _, sp in ok + reg] or [1.0]
    low = min(min(ys), 1.0)
    if bad:
        ax.scatter(bad, [low * 0.9] * len(bad), marker="x", s=18, color=PALETTE["failed"],
                   label="failed (compile, wrong result, ...)")
    steps = best_so_far(pts)
    end = max([p[0] for p in pts] + [float((result.get("search") or {}).get("elapsed_s") or 0)])
    xs, yb = [0.0], [1.0]
    for t, b in steps:
        xs += [t, t]
        yb += [yb[-1], b]
    xs.append(end)
    yb.append(yb[-1])
    ax.plot(xs, yb, color=PALETTE["best"], linewidth=2, label="best so far")
    ax.axhline(1.0, color=PALETTE["written"], linestyle="--", linewidth=1)
    ax.set_xlabel("wall time since the start (s)")
    ax.set_ylabel("speed-up over as written")
    if max(ys) / max(low, 1e-9) > 20:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return figs.inline(fig, "Search progress: every candidate's speed-up (geometric mean over the cases) at the "
                            "time the trace recorded it (a round's candidates together), and the best so far")


def case_bars_figure(figs, labels, series, caption, unit="ms"):
    """Grouped horizontal bars: series is [(name, colour, [value or None per label])]."""
    series = [s for s in series if any(_num(v) for v in s[2])]
    if not labels or not series:
        return None
    n = len(series)
    h = 0.8 / n
    fig, ax = figs.new(9, max(1.6, 0.35 * len(labels) * n + 1.0))
    for k, (name, colour, vals) in enumerate(series):
        ys = [i + (k - (n - 1) / 2) * h for i in range(len(labels))]
        ax.barh(ys, [v if _num(v) else 0 for v in vals], height=h * 0.95, color=colour, label=name)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels([lab if len(lab) <= 40 else lab[:37] + "..." for lab in labels], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(unit)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return figs.inline(fig, caption)


def roofline_data(result):
    """(ceilings, compute_class, [(label, flops, bytes, written_ms, best_ms)]) or None with why."""
    roof = next((e.get("data") or {} for e in result.get("trace") or [] if e.get("kind") == "roofline"), None)
    if not roof or not roof.get("available") or not roof.get("ceilings"):
        why = (roof or {}).get("reason") or ("the run recorded no roofline (no GPU ceilings, or no flops(case) / "
                                             "bytes(case) in the harness)")
        return None, why
    cands = result.get("candidates") or []
    written = cands[0].get("cases") if cands else None
    if not written:
        return None, "the kernel as written has no recorded measurements"
    base = (result.get("baseline") or {}).get("per_case") or []
    best = (result.get("best") or {}).get("per_case") or base
    rows = []
    for i, c in enumerate(written):
        work = c.get("work") or {}
        label = base[i].get("label") if i < len(base) else f"case {i}"
        b_ms = base[i].get("time_ms") if i < len(base) else None
        o_ms = best[i].get("time_ms") if i < len(best) else None
        rows.append((label, work.get("flops") or 0.0, work.get("bytes") or 0.0, b_ms, o_ms))
    return (roof["ceilings"], roof.get("compute_class") or "fp32", rows), None


def roofline_figure(figs, data):
    ceilings, cls, rows = data
    bw = ceilings.get("dram_bytes_per_s")
    peak = (ceilings.get("flops_per_s") or {}).get(cls)
    pts = [r for r in rows if r[1] > 0 and r[2] > 0 and _num(r[3])]
    if not bw or not peak or not pts:
        return None
    fig, ax = figs.new(8, 4.6)
    ais = [r[1] / r[2] for r in pts]
    lo, hi = min(ais + [peak / bw]) / 8, max(ais + [peak / bw]) * 8
    xs = [lo * (hi / lo) ** (k / 100) for k in range(101)]
    ax.plot(xs, [min(peak, x * bw) for x in xs], color="#333", linewidth=1.5,
            label=f"roofline: DRAM {bw / 1e12:.2f} TB/s, {cls} {peak / 1e12:.0f} TFLOP/s")
    for k, (label, flops, nbytes, b_ms, o_ms) in enumerate(pts):
        ai = flops / nbytes
        yb = flops / (b_ms * 1e-3)
        ax.scatter([ai], [yb], color=PALETTE["written"], s=40, zorder=3, label="as written" if k == 0 else None)
        if _num(o_ms) and o_ms > 0:
            yo = flops / (o_ms * 1e-3)
            ax.scatter([ai], [yo], color=PALETTE["best"], s=40, zorder=3, label="optimized" if k == 0 else None)
            ax.annotate("", xy=(ai, yo), xytext=(ai, yb), arrowprops={"arrowstyle": "->", "color": "#888"})
        if len(pts) > 1:
            ax.annotate(label[:24], (ai, yb), fontsize=7, xytext=(4, -10), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / byte of DRAM traffic)")
    ax.set_ylabel("achieved FLOP/s")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")
    return figs.inline(fig, "Roofline: each case's kernel as written and optimized, from the harness's work and "
                            "the ceilings measured on this GPU")


# ---------------------------------------------------------------------------------------
# Sections


def diff_html(diff):
    if not diff:
        return "<p>The source is unchanged.</p>"
    out = []
    for line in diff.splitlines():
        cls = None
        if line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+") and not line.startswith("+++"):
            cls = "add"
        elif line.startswith("-") and not line.startswith("---"):
            cls = "del"
        out.append(f'<span class="{cls}">{esc(line)}</span>' if cls else esc(line) + "\n")
    return '<pre class="diff">' + "".join(out) + "</pre>"


def decisions_html(result):
    """The trace's decisions, as report.md's Decisions section has them."""
    proposals, findings, outcomes, other = {}, [], {}, []
    for e in result.get("trace") or []:
        kind, d = e.get("kind"), e.get("data") or {}
        if kind == "finding":
            findings.append(d)
        elif kind == "proposal":
            proposals[d.get("id", "")] = d
        elif kind == "round":
            for o in d.get("outcomes") or []:
                rec = outcomes.setdefault(o.get("proposal", ""), {"measured": 0, "gain": None})
                rec["measured"] += o.get("measured") or 0
                if _num(o.get("gain")):
                    rec["gain"] = o["gain"] if rec["gain"] is None else max(rec["gain"], o["gain"])
        elif kind in ("pass-result", "pass-refused", "pass-skipped", "base", "base-refused", "engine-error",
                      "confirm", "stop", "preload", "warm-start"):
            other.append((e.get("t"), kind, d))
    s = result.get("search") or {}
    items = [f"strategy <b>{esc(s.get('strategy'))}</b> ({esc(s.get('strategy_reason'))}); engine "
             f"{esc(s.get('engine'))}",
             f"{esc(s.get('evaluated'))} candidates proposed in {esc(s.get('rounds'))} rounds; "
             f"{esc(s.get('measured'))} measured, {esc(s.get('reused'))} reused from the results database",
             f"stopped: {esc(s.get('stopped_because'))}"]
    for f in findings:
        items.append(f"finding <b>{esc(f.get('id'))}</b> ({esc(f.get('kind'))}, {esc(f.get('source'))}): "
                     f"{esc(f.get('summary'))}")
    for pid, p in proposals.items():
        what = f"pass <code>{esc(p.get('pass'))}</code>" if p.get("kind") == "pass" else \
            f"region <code>{esc(json.dumps(p.get('region')))}</code>"
        o = outcomes.get(pid)
        if not o:
            res = "no candidates"
        else:
            res = f"{o['measured']} candidates"
            if o["gain"] is not None:
                g = o["gain"]
                res += (f", won: {100 * g:.1f}% below the best before its round" if g > 0 else
                        f", lost: {-100 * g:.1f}% above the best before its round")
        items.append(f"proposal <b>{esc(pid)}</b> from {esc(', '.join(p.get('findings') or []) or '-')}: {what} "
                     f"({esc(p.get('rationale'))}): {res}")
    if "strategy" in outcomes:
        items.append(f"the strategy's own proposals: {outcomes['strategy']['measured']} candidates")
    for t, kind, d in other:
        if kind == "confirm":
            text = (f"confirmation: speed-up {d.get('speedup', 0):.3f}x, accepted: {d.get('accepted')}"
                    if _num(d.get("speedup")) else json.dumps(d))
        elif kind == "stop":
            text = f"stop after {d.get('rounds')} rounds: {d.get('reason')}"
        else:
            text = json.dumps(d, sort_keys=True)
            if len(text) > 400:
                text = text[:397] + "..."
        items.append(f"<code>{esc(kind)}</code> at {t or 0:.1f} s: {esc(text)}")
    return '<ul class="decisions">' + "".join(f"<li>{x}</li>" for x in items) + "</ul>"


def page(title, body):
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><link rel=\"icon\" href=\"data:,\"><style>{STYLE}</style></head>"
            f"<body>\n{body}\n</body></html>\n")


def dispatch_html(result):
    """Which shapes get what, when the run built a per-shape dispatch ("" otherwise)."""
    d = result.get("dispatch")
    if not isinstance(d, dict) or not d.get("built"):
        return ""
    feature = d.get("feature") or "?"
    head = "Handed back" if d.get("handed_back") else "Built, not handed back"
    why = f" ({esc(d.get('reason'))})" if d.get("reason") else ""
    rows = []
    for bk in d.get("buckets") or []:
        extra = bk.get("extra_shapes") or []
        verified = sum(1 for e in extra if e.get("status") == "verified")
        rows.append(f"<tr><td class=num>{esc(bk.get('lo'))}..{esc(bk.get('hi'))}</td><td>{esc(bk.get('runs'))}</td>"
                    f"<td>{esc('; '.join(bk.get('cases') or []))}</td>"
                    f"<td class=num>{'-' if bk.get('candidate') is None else verified}</td></tr>")
    return (f"<h2>Per-shape dispatch</h2><p>{head}{why}: the launcher picks by <code>{esc(feature)}</code>; a shape "
            "outside every row runs the kernel as written.</p>"
            f"<table><tr><th>{esc(feature)}</th><th>runs</th><th>measured cases</th><th>extra shapes verified</th></tr>"
            f"{''.join(rows)}</table>")


def optimize_html(result, diff=None):
    """The page for one optimize run's result.json (and its changes.diff)."""
    figs = Figures()
    task = result.get("task") or {}
    env = result.get("environment") or {}
    gpu = (env.get("gpu") or {}).get("name") if isinstance(env.get("gpu"), dict) else None
    s = result.get("search") or {}
    tool = result.get("tool") or {}
    b = []
    b.append(f"<h1>tritonforge: {esc(task.get('name'))}</h1>")
    b.append(f"<p class=\"meta\">{esc(result.get('date'))} &middot; tritonforge {esc(tool.get('version'))} "
             f"(commit {esc(tool.get('commit'))}) &middot; GPU: {esc(gpu or 'none')} &middot; triton "
             f"{esc(env.get('triton'))}, torch {esc(env.get('torch'))} &middot; effort "
             f"<b>{esc(s.get('effort', 'default'))}</b> &middot; budget {esc(s.get('budget_s'))} s, "
             f"{float(s.get('elapsed_s') or 0):.1f} s used</p>")
    if figs.why:
        b.append(f'<p class="note">No figures: {esc(figs.why)}.</p>')
    status = result.get("status")
    if status == "no-gpu":
        b.append(f"<p>Nothing was measured: {esc(env.get('no_gpu_reason'))}.</p>")
    else:
        sp = result.get("speedup")
        b.append(f'<p><span class="big">Speed-up: {sp:.2f}x</span> ({esc(status)}; geometric mean over '
                 f"{len(task.get('cases') or [])} case(s), confirmed by an interleaved re-measurement). Best: "
                 f"<code>{esc((result.get('best') or {}).get('config_text'))}</code></p>" if _num(sp) else "")
    for n in result.get("notes") or []:
        b.append(f'<p class="note">{esc(n)}</p>')

    if status != "no-gpu":
        b.append("<h2>Search progress</h2>")
        fig = progress_figure(figs, result) if figs.plt else None
        pts = progress_points(result)
        steps = best_so_far(pts)
        b.append(fig or "")
        b.append(f"<p>{len(pts)} candidates; the best so far improved {len(steps)} time(s)"
                 + (f", last at {steps[-1][0]:.1f} s to {steps[-1][1]:.2f}x" if steps else "") + ".</p>")

        b.append("<h2>Per case</h2>")
        base = (result.get("baseline") or {}).get("per_case") or []
        best = (result.get("best") or {}).get("per_case") or base
        labels = [c.get("label") or f"case {i}" for i, c in enumerate(base)]
        written = [c.get("time_ms") for c in base]
        opt = [best[i].get("time_ms") if i < len(best) else None for i in range(len(base))]
        # optimize measures no vendor op (bench/run does: its results.html shows them).
        series = [("as written", PALETTE["written"], written), ("best", PALETTE["best"], opt)]
        if figs.plt:
            b.append(case_bars_figure(figs, labels, series, "Time per case (ms, lower is better)") or "")
        # A Gluon lowering routes each call: say which kernel ran each case (none: no column).
        routes = ["Gluon" if i < len(best) and best[i].get("route") == "gluon" else "as written"
                  for i in range(len(base))]
        routed = "Gluon" in routes
        rows = "".join(
            f"<tr><td>{esc(lab)}</td><td class=num>{fmt_ms(w)}</td><td class=num>{fmt_ms(o)}</td>"
            f"<td class=num>{(w / o if _num(w) and _num(o) and o > 0 else 0):.2f}x</td>"
            + (f"<td>{route}</td>" if routed else "") + "</tr>"
            for lab, w, o, route in zip(labels, written, opt, routes))
        b.append("<table><tr><th>case</th><th>as written (ms)</th><th>best (ms)</th><th>speed-up</th>"
                 + ("<th>route</th>" if routed else "") + f"</tr>{rows}</table>")

        b.append(dispatch_html(result))

        b.append("<h2>Roofline</h2>")
        data, why = roofline_data(result)
        if data is None:
            b.append(f"<p>No roofline: {esc(why)}.</p>")
        else:
            fig = roofline_figure(figs, data) if figs.plt else None
            b.append(fig or "")
            ceilings, cls, rrows = data
            bw = ceilings.get("dram_bytes_per_s") or 0
            peak = (ceilings.get("flops_per_s") or {}).get(cls) or 0
            trs = []
            for label, flops, nbytes, b_ms, o_ms in rrows:
                least = max(nbytes / bw if bw else 0, flops / peak if peak else 0) * 1e3
                pct = [f"{100 * least / t:.1f}%" if least > 0 and _num(t) and t > 0 else "–" for t in (b_ms, o_ms)]
                trs.append(f"<tr><td>{esc(label)}</td><td class=num>{flops:.3g}</td><td class=num>{nbytes:.3g}</td>"
                           f"<td class=num>{pct[0]}</td><td class=num>{pct[1]}</td></tr>")
            b.append("<table><tr><th>case</th><th>FLOP</th><th>bytes</th><th>% of roofline, as written</th>"
                     f"<th>% of roofline, optimized</th></tr>{''.join(trs)}</table>")

    b.append("<h2>Changes</h2>")
    b.append(diff_html(diff))
    b.append("<h2>Decisions</h2>")
    b.append(decisions_html(result))
    return page(f"tritonforge: {task.get('name')}", "\n".join(b))


# ---------------------------------------------------------------------------------------
# bench/run's suite summary


def bench_html(doc):
    """results.html for bench/run's results.json (schema tritonforge.bench/1)."""
    figs = Figures()
    kernels = doc.get("kernels") or {}
    s = doc.get("summary") or {}
    env = doc.get("environment") or {}
    gpu = (env.get("gpu") or {}).get("name") if isinstance(env.get("gpu"), dict) else env.get("gpu")
    b = ["<h1>tritonforge benchmark suite</h1>",
         f"<p class=\"meta\">updated {esc(doc.get('updated'))} &middot; GPU {esc(gpu or '?')} &middot; "
         f"{esc(doc.get('tritonforge_version'))}</p>"]
    if figs.why:
        b.append(f'<p class="note">No figures: {esc(figs.why)}.</p>')
    if s.get("kernels"):
        def x(v):
            return f"{v:.2f}x" if _num(v) else "–"
        b.append(f"<p><span class=\"big\">geomean speed-up over as written: tritonforge "
                 f"{x(s.get('geomean_speedup_tritonforge'))}, autotune {x(s.get('geomean_speedup_autotune'))}"
                 f"</span> over {s.get('kernels')} kernels; median tritonforge wall "
                 f"{float(s.get('median_tritonforge_wall_s') or 0):.1f} s, median autotune tuning "
                 f"{float(s.get('median_autotune_tuning_s') or 0):.1f} s</p>")
    names, sp = [], {"tritonforge": [], "autotune": [], "vendor": []}
    walls = {"tritonforge": [], "autotune": []}
    rows = []
    for name, k in kernels.items():
        if k.get("status") != "done":
            rows.append(f"<tr><td>{esc(name)}</td><td colspan=6>{esc(k.get('status'))}: "
                        f"{esc(str(k.get('error', ''))[:200])}</td></tr>")
            continue
        names.append(name)
        agg = k.get("speedup") or {}
        for key in sp:
            sp[key].append(agg.get(key))
        tf = k.get("tritonforge") or {}
        walls["tritonforge"].append(tf.get("wall_s"))
        tunes = [((c.get("autotune") or {}).get("tuning_s")) for c in k.get("cases") or []]
        walls["autotune"].append(sum(t for t in tunes if _num(t)) if any(_num(t) for t in tunes) else None)
        c0 = (k.get("cases") or [{}])[0]

        def ms(key):
            r = c0.get(key) or {}
            text = fmt_ms(r.get("ms")) if r.get("status") == "ok" else esc(r.get("status") or "–")
            if key == "vendor" and r.get("name"):  # the fastest of the harness's vendor backends
                text += f" <span class=meta>({esc(r['name'])})</span>"
            return text

        rows.append(f"<tr><td>{esc(name)}</td><td class=num>{ms('baseline')}</td><td class=num>{ms('tritonforge')}</td>"
                    f"<td class=num>{ms('autotune')}</td><td class=num>{ms('vendor')}</td>"
                    f"<td class=num>{(agg.get('tritonforge') or 0):.2f}x</td>"
                    f"<td class=num>{float(tf.get('wall_s') or 0):.1f}</td></tr>")
    if figs.plt and names:
        b.append("<h2>Speed-up over the kernel as written</h2>")
        b.append(case_bars_figure(figs, names, [("tritonforge", PALETTE["best"], sp["tritonforge"]),
                                                ("@triton.autotune", PALETTE["autotune"], sp["autotune"]),
                                                ("vendor", PALETTE["vendor"], sp["vendor"])],
                                  "Speed-up per kernel (geometric mean over its cases; higher is better)",
                                  unit="speed-up over as written") or "")
        b.append("<h2>Wall time</h2>")
        b.append(case_bars_figure(figs, names, [("tritonforge optimize", PALETTE["best"], walls["tritonforge"]),
                                                ("@triton.autotune tuning", PALETTE["autotune"], walls["autotune"])],
                                  "Wall time to the result (s)", unit="s") or "")
    b.append("<h2>Kernels</h2>")
    b.append("<table><tr><th>kernel</th><th>as written (ms)</th><th>tritonforge (ms)</th><th>autotune (ms)</th>"
             "<th>vendor (ms)</th><th>tritonforge speed-up</th><th>tritonforge wall (s)</th></tr>"
             + "".join(rows) + "</table><p class=meta>Times of each kernel's first case.</p>")
    return page("tritonforge benchmark suite", "\n".join(b))


def capture_html(doc):
    """`tritonforge capture`'s table (capture.json): the kernels ranked by GPU time, their share,
    tunable or why not, and the replay tasks written."""
    program = doc.get("program") or {}
    gpu_total = doc.get("gpu_total_ms")
    total = gpu_total or doc.get("total_ms") or 0
    unit = "wall ms" if doc.get("timing") == "wall" else "GPU ms"
    body = [f"<h1>Capture: {esc(' '.join(program.get('argv') or []))}</h1>",
            f"<p class=\"meta\">{len(doc.get('kernels') or [])} kernels, {_num(doc.get('total_ms')):.3f} {unit} "
            f"over {doc.get('processes', 0)} process(es); timing: {esc(doc.get('timing') or '-')}; the program "
            f"{'ended' if program.get('ok', True) else 'failed (' + esc(program.get('status', '')) + ')'} "
            f"after {_num(program.get('wall_s')):.1f} s; versions: {esc(json.dumps(doc.get('versions') or {}))}</p>"]
    if gpu_total:
        body.append(f"<p>The program's GPU kernel time (torch.profiler): {gpu_total:.3f} ms, "
                    f"{100 * _num(doc.get('total_ms')) / gpu_total:.1f}% of it in these Triton kernels; "
                    "the share is of it.</p>")
    rows = []
    for i, k in enumerate(doc.get("kernels") or [], 1):
        per = 1e3 * _num(k.get("time_ms")) / k["launches"] if k.get("launches") else 0
        where = f"{k.get('file')}:{k.get('line')}" if k.get("file") else ""
        tunable = "yes" if k.get("tunable") else "no: " + (k.get("why_not") or "")
        rows.append(f"<tr><td class=\"num\">{i}</td><td><code>{esc(k.get('name'))}</code><br>"
                    f"<span class=\"meta\">{esc(where)}</span></td><td class=\"num\">{k.get('launches', 0)}</td>"
                    f"<td class=\"num\">{k.get('signatures', 0)}</td><td class=\"num\">{_num(k.get('time_ms')):.3f}</td>"
                    f"<td class=\"num\">{100 * _num(k.get('share')):.1f}%</td><td class=\"num\">{per:.1f}</td>"
                    f"<td>{esc(tunable)}</td></tr>")
    body.append("<h2>Kernels, by GPU time</h2><table><tr><th>#</th><th>kernel</th><th>launches</th><th>shapes</th>"
                f"<th>{unit}</th><th>share</th><th>us/launch</th><th>tunable</th></tr>" + "".join(rows) + "</table>")
    tasks = doc.get("tasks")
    if tasks:
        items = []
        for t in tasks:
            what = (f"<code>{esc(t.get('task'))}</code> ({t.get('cases', 0)} case(s))" if t.get("task")
                    else "no task: " + esc(t.get("why_not")))
            notes = "".join(f"<br><span class=\"meta\">{esc(n)}</span>" for n in t.get("notes") or [])
            items.append(f"<li><code>{esc(t.get('kernel'))}</code>: {what}{notes}</li>")
        body.append("<h2>Replay tasks</h2><ul>" + "".join(items) + "</ul>")
    for e in doc.get("errors") or []:
        body.append(f"<p class=\"note\">{esc(e)}</p>")
    return page("tritonforge capture", "\n".join(body))


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tritonforge_worker.html_report", description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=("optimize", "bench", "capture"))
    p.add_argument("json", help="result.json of optimize, results.json of bench/run, or capture.json of capture")
    p.add_argument("--diff", help="changes.diff (optimize; default: beside the JSON)")
    p.add_argument("-o", "--out", required=True, help="the HTML file to write")
    a = p.parse_args(argv)
    with open(a.json, encoding="utf-8") as f:
        doc = json.load(f)
    if a.kind == "bench":
        text = bench_html(doc)
    elif a.kind == "capture":
        text = capture_html(doc)
    else:
        diff_path = a.diff or os.path.join(os.path.dirname(os.path.abspath(a.json)), "changes.diff")
        diff = None
        if os.path.exists(diff_path):
            with open(diff_path, encoding="utf-8") as f:
                diff = f.read()
        text = optimize_html(doc, diff)
    write_atomic(a.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

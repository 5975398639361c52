#!/usr/bin/env python3
"""bench/real/status.py: what tritonforge says about each kernel of the real corpus, written to
bench/real/STATUS.md.

For each kernel of the manifest (sources laid out by layout.py), on this machine:
  tritonforge analyze SOURCE --cases TASK          (static facts, tunables; compiles where it can)
  tritonforge optimize TASK --no-db --budget 20    (without a GPU: stops after the sm_90 compile
                                                    checks, exit 3)
and, from bench/results/real.json when a GPU run recorded it, the verdict of bench/run --suite real.
The laid-out package roots are on PYTHONPATH, as if the projects were installed.

  python3 bench/real/status.py [--tritonforge build/tritonforge] [--out bench/real/STATUS.md] [NAMES...]

Each kernel's half of the corpus (tuning or evaluation, bench/benchlib/split.py) is shown beside it.
Environment: TRITONFORGE_PYTHON (the worker's interpreter).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(BENCH_DIR)
sys.path.insert(0, BENCH_DIR)

from benchlib import real, split  # noqa: E402


def _short(text):
    return text.replace(REPO_DIR + os.sep, "").strip()


def _error_line(output):
    lines = [line for line in output.splitlines() if line.startswith("tritonforge: ")]
    return _short(lines[-1]) if lines else None


def analyze(binary, spec, env):
    r = subprocess.run([binary, "analyze", spec.source, "--cases", spec.task_path, "--json"],
                       capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        return "refused", _error_line(r.stderr + r.stdout) or f"exit {r.returncode}"
    doc = json.loads(r.stdout)
    items = [t for ts in (doc.get("tunables") or {}).values() for t in ts]
    tuned = sorted({f"{t['kernel']}.{t['param']}" for t in items if t.get("tunable")})
    alone = sorted({f"{t['kernel']}.{t['param']}" for t in items if not t.get("tunable")})
    return "accepted", f"{len(tuned)} tuned ({', '.join(tuned) or 'none'}); {len(alone)} left alone"


def optimize(binary, spec, env):
    with tempfile.TemporaryDirectory(prefix="tf-real-status-") as out:
        r = subprocess.run([binary, "optimize", spec.task_path, "--no-db", "--budget", "20", "--out", out],
                           capture_output=True, text=True, env=env, timeout=900)
        result = os.path.join(out, spec.name, "result.json")
        if r.returncode == 2 or not os.path.exists(result):
            return "refused", _error_line(r.stderr + r.stdout) or f"exit {r.returncode}"
        with open(result) as f:
            res = json.load(f)
    checks = res.get("compile_checks") or []
    counts = {}
    for c in checks:
        counts[c.get("status", "?")] = counts.get(c.get("status", "?"), 0) + 1
    reasons = sorted({_short(c.get("reason") or "") for c in checks if c.get("status") != "ok" and c.get("reason")})
    text = f"exit {r.returncode}, {res.get('status')}; compile checks: " + \
        (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none")
    if reasons:
        text += f" ({reasons[0][:160]})"
    return "accepted", text


def gpu_verdict(name, doc):
    k = (doc.get("kernels") or {}).get(name)
    if not k:
        return "not measured yet"
    if k.get("status") != "done":
        return f"error: {str(k.get('error'))[:200]}"
    tf = k.get("tritonforge") or {}
    status = tf.get("status")
    if status in ("improved", "unchanged"):
        return f"accepted: {status}, {k['speedup'].get('tritonforge') or 1.0:.2f}x (geomean of the cases)"
    if status == "skipped":
        return "tritonforge not run"
    return f"refused: {_short(str(tf.get('refusal') or tf.get('error')))}"


def main():
    p = argparse.ArgumentParser(prog="bench/real/status.py", description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*")
    p.add_argument("--tritonforge", default=os.path.join(REPO_DIR, "build", "tritonforge"))
    p.add_argument("--out", default=os.path.join(real.REAL_DIR, "STATUS.md"))
    p.add_argument("--results", default=os.path.join(BENCH_DIR, "results", "real.json"))
    args = p.parse_args()
    manifest = real.load_manifest()
    names = args.names or [k.name for k in manifest.kernels]
    halves = split.halves(manifest)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(manifest.pythonpath() + [x for x in env.get("PYTHONPATH", "").split(os.pathsep) if x])
    doc = {}
    if os.path.exists(args.results):
        with open(args.results) as f:
            doc = json.load(f)
    rows = []
    for name in names:
        spec = real.load_real_spec(name, manifest)
        if not os.path.exists(spec.source):
            print(f"status: {spec.source} is missing: run bench/real/layout.py first", file=sys.stderr)
            return 2
        a = analyze(args.tritonforge, spec, env)
        o = optimize(args.tritonforge, spec, env)
        g = gpu_verdict(name, doc)
        print(f"{name}: analyze {a[0]}; optimize {o[0]}; H200 {g.split(':')[0]}", flush=True)
        rows.append((spec, a, o, g))
    lines = ["# The real corpus: what tritonforge says", "",
             "Generated by `bench/real/status.py` (CPU columns: this machine, no GPU; the laid-out package",
             "roots on PYTHONPATH). `analyze` is `tritonforge analyze SOURCE --cases TASK`; `optimize` is",
             "`tritonforge optimize TASK --no-db --budget 20`, which without a GPU ends after the sm_90 compile",
             "checks (exit 3). The H200 column is `bench/run --suite real` (bench/results/real.md). The half is the",
             "kernel's half of the corpus (bench/benchlib/split.py): rules, priors and passes are developed on the",
             "tuning half; the evaluation half is held out.", "",
             "| kernel | half | repository | launcher | pattern | analyze (CPU) | optimize (CPU) | bench/run on the H200 |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for spec, a, o, g in rows:
        k = spec.kernel
        cells = [k.name, halves[k.name], f"{k.repo} `{k.path}`", f"`{k.launcher}`", k.pattern,
                 f"{a[0]}: {a[1]}", f"{o[0]}: {o[1]}", g]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    lines.append("")
    for half in ("all",) + split.HALVES:
        picked = [r for r in rows if half == "all" or halves[r[0].name] == half]
        ok = sum(1 for _, a, o, _ in picked if a[0] == o[0] == "accepted")
        lines.append(f"On the CPU, {'all kernels' if half == 'all' else f'the {half} half'} ({len(picked)}): "
                     f"{ok} accepted by both commands, {len(picked) - ok} refused by at least one.")
    lines.append("")
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

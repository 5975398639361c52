"""Puts analyze's predictions next to what the H200 measured and writes
OUT/analysis-vs-h200.md (called by analysis_predictions.sh; prints a short table last)."""

import csv
import datetime
import json
import os
import sys

OUT = sys.argv[1]
SECTORS = {"load": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
           "store": ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")}


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def load_json(path):
    try:
        return json.loads(read(path))
    except Exception:
        return None


def number(s):
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return None


def measured():
    """kernel name -> {"load": sectors/request, "store": ...} from ncu's raw CSV."""
    text = read(os.path.join(OUT, "access-raw.csv"))
    rows = [r for r in csv.reader(text.splitlines()) if r]
    out = {}
    if len(rows) < 3:
        return out
    head = rows[0]
    col = {name: i for i, name in enumerate(head)}
    for r in rows[2:]:
        name = r[col["Kernel Name"]] if "Kernel Name" in col else "?"
        vals = {}
        for kind, (sec, req) in SECTORS.items():
            if sec in col and req in col:
                s, q = number(r[col[sec]]), number(r[col[req]])
                vals[kind] = s / q if s is not None and q else None
        out[name.split("(")[0].strip()] = vals
    return out


def predictions(j):
    """kernel -> {"load": (verdict, width, sectors/request), "store": ...} for the first case."""
    out = {}
    for k in (j or {}).get("kernels", []):
        if not k.get("cases"):
            continue
        case = k["cases"][0]
        acc = {a["id"]: a for a in k["ir"]["accesses"]}
        p = {}
        for e in case["accesses"]:
            kind = acc[e["id"]]["kind"]
            if kind in ("load", "store") and kind not in p:
                p[kind] = (e["verdict"], e["width_bytes"], e["sectors_per_request"])
        comp = k.get("compiled") or []
        widths = None
        if comp and comp[0].get("status") == "ok":
            widths = comp[0].get("agreement", {}).get("access_widths")
        out[k["name"]] = (p, widths)
    return out


def agree(pred, meas):
    if pred is None or meas is None:
        return "n/a"
    return "yes" if abs(meas - pred) <= 0.25 * pred else "NO"


def main():
    env = read(os.path.join(OUT, "env.txt")).strip()
    access = load_json(os.path.join(OUT, "analyze-access.json"))
    meas = measured()
    pred = predictions(access)
    lines = ["# `tritonforge analyze` predictions against the H200", "",
             f"Recorded {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by "
             "`scripts/gpu/analysis_predictions.sh` (kernels in `scripts/gpu/analysis/`).", "",
             "```", env, "```", "",
             "## Coalescing: global sectors per request (Nsight Compute)", "",
             "Predicted by `analyze --cases scripts/gpu/analysis/access_patterns.toml` before anything ran; measured "
             "with `ncu --clock-control none` (metrics `l1tex__t_{sectors,requests}_pipe_lsu_mem_global_op_{ld,st}.sum`). "
             "Agreement: within 25 %.", "",
             "| kernel | access | predicted | width | predicted sectors/req | measured sectors/req | agree |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    table = []
    for name, (p, widths) in pred.items():
        m = meas.get(name, {})
        for kind in ("load", "store"):
            if kind not in p:
                continue
            verdict, width, spr = p[kind]
            got = m.get(kind)
            a = agree(spr, got)
            lines.append(f"| {name} | {kind} | {verdict} | {width} B | {spr} | {'' if got is None else f'{got:.2f}'} | {a} |")
            table.append((name, kind, verdict, spr, got, a))
    if not meas:
        lines += ["", "Nsight Compute produced no measurements: see `ncu-access.log`."]
    lines += ["", "Access widths the compiler chose for the same kernels (ahead-of-time compile, SASS):", "",
              "| kernel | predicted load / store bits | compiled load / store bits | agree |", "| --- | --- | --- | --- |"]
    for name, (p, widths) in pred.items():
        if widths:
            lines.append(f"| {name} | {widths['predicted_load_bits']} / {widths['predicted_store_bits']} | "
                         f"{widths['compiled_load_bits']} / {widths['compiled_store_bits']} | {widths['agree']} |")
    lines += ["", "## Shared memory: a configuration analyze prunes, and one it keeps", "",
              "`scripts/gpu/analysis/smem_configs.py`: an fp16 matmul with 256x128x64 tiles, 8 warps, launched with 4 "
              "and with 5 pipeline stages.", "",
              "| configuration | predicted shared memory | predicted | compiled shared memory | launch on the H200 | agree |",
              "| --- | --- | --- | --- | --- | --- |"]
    runs = {}
    for line in read(os.path.join(OUT, "smem.jsonl")).splitlines():
        try:
            r = json.loads(line)
            runs[r["config"]] = r
        except Exception:
            pass
    smem_rows = []
    for name in ("kept", "pruned"):
        j = load_json(os.path.join(OUT, f"analyze-smem-{name}.json"))
        k = (j or {}).get("kernels", [{}])[0] if j else {}
        case = (k.get("cases") or [{}])[0]
        sm = case.get("shared_memory") or {}
        fits = sm.get("fits")
        comp = (k.get("compiled") or [{}])[0]
        run = runs.get(name, {})
        launched = run.get("status")
        ok = "n/a" if fits is None or launched is None else ("yes" if (fits and launched == "ok") or (not fits and launched == "failed") else "NO")
        lines.append(f"| {name} | {sm.get('total')} B of {sm.get('limit')} | {'fits' if fits else 'pruned'} | "
                     f"{comp.get('shared_bytes')} B | {launched}: {run.get('detail', '')} | {ok} |")
        smem_rows.append((name, sm.get("total"), "fits" if fits else "pruned", launched, ok))
    lines += ["", "Logs and raw data: `analyze-*.json`, `access-raw.csv`, `ncu-access.log`, `smem.jsonl` next to this file.", ""]
    with open(os.path.join(OUT, "analysis-vs-h200.md"), "w") as f:
        f.write("\n".join(lines))
    print("===== analyze vs H200")
    print(f"{'kernel':24s} {'access':6s} {'predicted':12s} {'pred s/r':>8s} {'meas s/r':>8s} agree")
    for name, kind, verdict, spr, got, a in table:
        print(f"{name:24s} {kind:6s} {verdict:12s} {str(spr):>8s} {'' if got is None else f'{got:8.2f}'} {a}")
    for name, total, v, launched, ok in smem_rows:
        print(f"smem {name:7s} predicted {total} B ({v}); launch {launched}; agree {ok}")
    print(f"record: {os.path.join(OUT, 'analysis-vs-h200.md')}")


main()

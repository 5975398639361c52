#!/usr/bin/env python3
"""bench/census/run.py: the pass census over the laid-out corpus (docs/census.md).

Runs `tritonforge census --json` on every file of bench/census/manifest.toml laid out under
bench/census/src/ (bench/census/layout.py), in --jobs processes of one worker each, then
writes the raw outcome, compactly, to bench/census/LABEL/ and prints the tables of
docs/census.md:

  kernels.csv   one row per kernel: project, file, kernel, line, its analysis facts (`autotuned`:
                none, configs or computed), and per
                pass `A` (applied), the id of the refusal's reason (reasons.csv), `B<id>`
                (broken: the rewrite does not parse) or `C<id>` (crashed: the pass threw)
  reasons.csv   id, class id, family, the reason's text as the pass wrote it, with the kernel's
                own name written {kernel}
  summary.json  totals, per pass, per project, per reason class (kernels, files, projects
                blocked, passes, examples), the corpus's commits, the tool and the time taken

  python3 bench/census/run.py [--label before] [--jobs 2] [--binary build/tritonforge]
  python3 bench/census/run.py --report bench/census/before [--top N]   (the tables again, from the data)

A process that fails (a worker that dies, a pass that aborts) is retried file by file; a file
that still fails is listed in summary.json's `failed` and counts no kernels.
Exit codes: 0 done; 1 the census failed on some file or the layout is missing; 2 bad flags.
"""

import argparse
import csv
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

CENSUS_DIR = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.dirname(CENSUS_DIR)
ROOT = os.path.dirname(BENCH_DIR)
sys.path.insert(0, BENCH_DIR)

from benchlib import census, real  # noqa: E402

FACT_COLUMNS = {"autotune": "autotuned"}

# Facts counted over the kernels each reason class blocks (summary.json's `facts`).
FACT_TESTS = {
    "autotuned": lambda f: f.get("autotune", "none") != "none",
    "not launched here": lambda f: f.get("launches", 0) == 0,
    "pid cast (.to)": lambda f: f.get("pid_cast", 0) > 0,
    "pids in a tuple": lambda f: f.get("pid_tuple", 0) > 0,
    "tl.num_programs": lambda f: f.get("num_programs", 0) > 0,
    "has a return": lambda f: bool(f.get("returns")),
    "has a dot": lambda f: f.get("dots", 0) > 0,
    "has a loop": lambda f: f.get("loops", 0) > 0,
}

FACTS = ["params", "constexprs", "tile_params", "autotune", "heuristics", "launches", "called_by_kernels",
         "launch_functions",
         "module_level_launches", "starred_launches", "program_ids", "pid_vars", "pid_cast", "pid_tuple",
         "num_programs", "dots",
         "dots_in_loop", "loops", "loads", "stores", "atomics", "reductions", "calls_exp", "returns", "notes"]


def run_chunk(binary, files, src_dir):
    """(census JSON or None, stderr) of one process over `files` (paths relative to src_dir)."""
    r = subprocess.run([binary, "census", "--json", *files], cwd=src_dir, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
    return json.loads(r.stdout), ""


def run_all(binary, files, src_dir, jobs):
    """The census of every file: [(file JSON)], {file: error}, the tool's version line."""
    chunks = [files[i::jobs] for i in range(jobs)]
    results, failed, tool = {}, {}, ""

    def one(chunk):
        data, err = run_chunk(binary, chunk, src_dir)
        if data is not None:
            return [(f["path"], f, data["tool"]) for f in data["files"]], {}
        # Retry alone, to find the file that fails and keep the others.
        got, bad = [], {}
        for path in chunk:
            d, e = run_chunk(binary, [path], src_dir)
            if d is None:
                bad[path] = e
            else:
                got += [(f["path"], f, d["tool"]) for f in d["files"]]
        return got, bad

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for got, bad in pool.map(one, [c for c in chunks if c]):
            for path, f, t in got:
                results[path] = f
                tool = t
            failed.update(bad)
    return [results[p] for p in files if p in results], failed, tool


def kernel_template(reason, kernel):
    """The reason with the kernel's own name written {kernel} (reasons.csv; the row of
    kernels.csv gives it back), so that one text serves every kernel refused alike."""
    return re.sub(r"(?<![A-Za-z0-9_])" + re.escape(kernel) + r"(?![A-Za-z0-9_])", "{kernel}", reason)


def project_of(path):
    return path.split("/", 1)[0]


def write_data(out_dir, files, failed, manifest, tool, seconds, jobs, args_line):
    os.makedirs(out_dir, exist_ok=True)
    passes = []
    for f in files:
        for k in f["kernels"]:
            for t in k["trials"]:
                if t["pass"] not in passes:
                    passes.append(t["pass"])
    reasons, classes = {}, {}  # text -> id, class text -> id
    reason_rows = []
    rows = []
    cls = defaultdict(lambda: {"kernels": set(), "helpers": set(), "files": set(), "projects": set(), "passes": Counter(),
                               "facts": Counter(),
                               "trials": 0, "examples": [], "sample": ""})
    per_pass = defaultdict(Counter)
    per_pass_family = defaultdict(Counter)
    per_project = defaultdict(lambda: {"files": set(), "kernels": 0, "status": Counter(), "classes": Counter()})
    totals = Counter()
    families = Counter()
    kernel_kinds = Counter()
    for f in files:
        proj = project_of(f["path"])
        per_project[proj]["files"].add(f["path"])
        for k in f["kernels"]:
            per_project[proj]["kernels"] += 1
            cells = {}
            seen_classes = set()
            # A @triton.jit helper other kernels call, never launched itself.
            helper = k["facts"].get("launches", 0) == 0 and k["facts"].get("called_by_kernels", 0) > 0
            kernel_kinds["helpers" if helper else "kernels"] += 1
            for t in k["trials"]:
                st = t["status"]
                per_pass[t["pass"]][st] += 1
                per_project[proj]["status"][st] += 1
                totals[st] += 1
                if st == "applied":
                    cells[t["pass"]] = "A"
                    continue
                c = t["class"]
                if c not in classes:
                    classes[c] = len(classes) + 1
                text = kernel_template(t["reason"], k["name"])
                if text not in reasons:
                    reasons[text] = len(reasons) + 1
                    reason_rows.append([reasons[text], classes[c], t["family"], text])
                rid = reasons[text]
                cells[t["pass"]] = {"refused": "", "broken": "B", "crashed": "C"}[st] + str(rid)
                families[t["family"]] += 1
                per_pass_family[t["pass"]][t["family"]] += 1
                e = cls[c]
                e["family"] = t["family"]
                e["trials"] += 1
                e["passes"][t["pass"]] += 1
                e["files"].add(f["path"])
                e["projects"].add(proj)
                key = (f["path"], k["name"])
                if helper:
                    e["helpers"].add(key)
                if key not in e["kernels"]:
                    e["kernels"].add(key)
                    for name, test in FACT_TESTS.items():
                        e["facts"][name] += 1 if test(k["facts"]) else 0
                    if len(e["examples"]) < 3:
                        e["examples"].append(f"{f['path']}:{k['name']} ({t['pass']})")
                if not e["sample"]:
                    e["sample"] = t["reason"]
                if c not in seen_classes and t["family"] != "absent":
                    per_project[proj]["classes"][c] += 1
                    seen_classes.add(c)
            facts = k["facts"]
            rows.append([proj, f["path"].split("/", 1)[1], k["name"], k["line"]]
                        + [facts.get(x, "") for x in FACTS] + [cells.get(p, "") for p in passes])
    with open(os.path.join(out_dir, "kernels.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        # The fact `autotune` is written `autotuned`: `autotune` names the pass's column.
        w.writerow(["project", "file", "kernel", "line"] + [FACT_COLUMNS.get(x, x) for x in FACTS] + passes)
        w.writerows(rows)
    with open(os.path.join(out_dir, "reasons.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["id", "class", "family", "reason"])
        w.writerows(reason_rows)
    ranked = sorted(cls.items(), key=lambda kv: (-len(kv[1]["kernels"]), -kv[1]["trials"], kv[0]))
    kernels_total = sum(len(f["kernels"]) for f in files)
    summary = {
        "schema": "tritonforge.census-summary/1",
        "tool": tool,
        "command": args_line,
        "seconds": round(seconds, 1),
        "jobs": jobs,
        "corpus": [{"key": r.key, "url": r.url, "commit": r.commit, "license": r.license, "files": len(r.censused)}
                   for r in manifest],
        "files": len(files),
        "kernels": kernels_total,
        "helpers": kernel_kinds["helpers"],
        "failed": failed,
        "trials": sum(totals.values()),
        "status": dict(totals),
        "families": dict(families),
        "passes": [{"pass": p, **{s: per_pass[p][s] for s in ("applied", "refused", "broken", "crashed")},
                    "families": dict(per_pass_family[p].most_common())}
                   for p in passes],
        "projects": [{"project": p, "files": len(v["files"]), "kernels": v["kernels"],
                      **{s: v["status"][s] for s in ("applied", "refused", "broken", "crashed")},
                      "top_classes": [[classes[c], n] for c, n in v["classes"].most_common(3)]}
                     for p, v in sorted(per_project.items())],
        "classes": [{"id": classes[c], "class": c, "family": e["family"], "kernels": len(e["kernels"]),
                     "helpers": len(e["helpers"]),
                     "files": len(e["files"]), "projects": len(e["projects"]), "trials": e["trials"],
                     "passes": dict(e["passes"].most_common()), "examples": e["examples"], "sample": e["sample"],
                     "facts": {name: e["facts"][name] for name in FACT_TESTS}}
                    for c, e in ranked],
    }
    with open(os.path.join(out_dir, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
        fh.write("\n")
    return summary


def md_escape(s):
    return s.replace("|", "\\|").replace("\n", " ")


def tables(summary, top=30):
    out = []
    st = summary["status"]
    out.append(f"{summary['files']} files, {summary['kernels']} kernels ({summary['helpers']} of them @triton.jit "
               f"helpers that other kernels call, never launched), {summary['trials']} trials "
               f"({len(summary['passes'])} passes): {st.get('applied', 0)} applied, {st.get('refused', 0)} refused, "
               f"{st.get('broken', 0)} broken, {st.get('crashed', 0)} crashed; {summary['seconds']} s "
               f"with {summary['jobs']} processes. {summary['tool']}.")
    if summary["failed"]:
        out.append("")
        out.append("Files the census failed on: " + "; ".join(f"{p} ({e})" for p, e in summary["failed"].items()))
    out += ["", "Refusals by family (trials):", ""]
    out += ["| family | trials |", "| --- | ---: |"]
    for fam, n in sorted(summary["families"].items(), key=lambda kv: -kv[1]):
        out.append(f"| {fam} | {n} |")
    out += ["", f"Reason classes ranked by kernels blocked (the first {top}; all in summary.json):", ""]
    out += ["| # | class | family | kernels | of them helpers | files | projects | passes (trials) | examples |",
            "| ---: | --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for i, c in enumerate(summary["classes"][:top], 1):
        passes = ", ".join(f"{p} {n}" for p, n in c["passes"].items())
        ex = "; ".join(c["examples"][:2])
        out.append(f"| {i} | {md_escape(c['class'])} | {c['family']} | {c['kernels']} | {c['helpers']} | {c['files']} | "
                   f"{c['projects']} | {passes} | {md_escape(ex)} |")
    actionable = [c for c in summary["classes"] if c["family"] != "absent"]
    out += ["", f"The same without the family `absent` (the kernel lacks what the pass rewrites), the first {top}:", ""]
    out += ["| # | class | family | kernels | of them helpers | files | projects | passes (trials) | examples |",
            "| ---: | --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for i, c in enumerate(actionable[:top], 1):
        passes = ", ".join(f"{p} {n}" for p, n in c["passes"].items())
        ex = "; ".join(c["examples"][:2])
        out.append(f"| {i} | {md_escape(c['class'])} | {c['family']} | {c['kernels']} | {c['helpers']} | {c['files']} | "
                   f"{c['projects']} | {passes} | {md_escape(ex)} |")
    out += ["", f"What the kernels each of those classes blocks have in common (the first {top // 2}; "
            "kernels with the fact, of those blocked):", ""]
    out += ["| # | class | kernels | " + " | ".join(FACT_TESTS) + " |",
            "| ---: | --- | ---: | " + " | ".join("---:" for _ in FACT_TESTS) + " |"]
    for i, c in enumerate(actionable[:top // 2], 1):
        facts = c.get("facts", {})
        out.append(f"| {i} | {md_escape(c['class'][:90])} | {c['kernels']} | "
                   + " | ".join(str(facts.get(name, "")) for name in FACT_TESTS) + " |")
    out += ["", "Per pass (each kernel tried once per pass; refused split by family):", ""]
    out += ["| pass | applied | refused | of them absent | needs-task | other | broken | crashed | top classes not absent (trials) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    names = {c["id"]: c["class"] for c in summary["classes"]}
    for p in summary["passes"]:
        fam = p.get("families", {})
        top_cls = sorted(((c["passes"].get(p["pass"], 0), c["id"]) for c in actionable), reverse=True)[:2]
        tc = "; ".join(f"{md_escape(names[i][:70])} ({n})" for n, i in top_cls if n)
        other = p["refused"] - fam.get("absent", 0) - fam.get("needs-task", 0)
        out.append(f"| {p['pass']} | {p['applied']} | {p['refused']} | {fam.get('absent', 0)} | "
                   f"{fam.get('needs-task', 0)} | {other} | {p['broken']} | {p['crashed']} | {tc} |")
    out += ["", "Per project:", ""]
    out += ["| project | files | kernels | applied | refused | broken | crashed | most common classes not absent (kernels) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    names = {c["id"]: c["class"] for c in summary["classes"]}
    for p in summary["projects"]:
        tc = "; ".join(f"{md_escape(names[i][:60])} ({n})" for i, n in p["top_classes"])
        out.append(f"| {p['project']} | {p['files']} | {p['kernels']} | {p['applied']} | {p['refused']} | "
                   f"{p['broken']} | {p['crashed']} | {tc} |")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(prog="bench/census/run.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--label", default="before", help="the output folder under bench/census/ (default before)")
    p.add_argument("--out", help="the output folder (default bench/census/LABEL)")
    p.add_argument("--jobs", type=int, default=2, help="census processes at once (default 2)")
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "tritonforge"))
    p.add_argument("--manifest", default=census.MANIFEST)
    p.add_argument("--src", default=census.SRC_DIR, help="where layout.py laid the files out")
    p.add_argument("--only", default="", help="comma-separated project keys (default: all)")
    p.add_argument("--report", metavar="DIR", help="print the tables of DIR/summary.json and exit")
    p.add_argument("--top", type=int, default=30, help="reason classes in the ranked tables (default 30)")
    args = p.parse_args()
    if args.report:
        with open(os.path.join(args.report, "summary.json")) as fh:
            sys.stdout.write(tables(json.load(fh), args.top))
        return 0
    if args.jobs < 1 or args.jobs > 64:
        print("run: --jobs must be 1 to 64", file=sys.stderr)
        return 2
    try:
        manifest = census.load_manifest(args.manifest)
    except real.ManifestError as exc:
        print(f"run: {exc}", file=sys.stderr)
        return 2
    only = [k for k in args.only.split(",") if k]
    if only:
        manifest = [r for r in manifest if r.key in only]
    stamp = os.path.join(args.src, "LAYOUT.json")
    with open(args.manifest, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    if not os.path.exists(stamp) or json.load(open(stamp)).get("manifest_sha256") != digest:
        print(f"run: {args.src} is not laid out from this manifest: run bench/census/layout.py first", file=sys.stderr)
        return 1
    files = [f"{r.key}/{path}" for r in manifest for path, _ in r.censused]
    if not os.access(args.binary, os.X_OK):
        print(f"run: no tritonforge binary at {args.binary}", file=sys.stderr)
        return 1
    t0 = time.monotonic()
    results, failed, tool = run_all(args.binary, files, args.src, args.jobs)
    seconds = time.monotonic() - t0
    out_dir = args.out or os.path.join(CENSUS_DIR, args.label)
    line = "python3 bench/census/run.py " + " ".join(sys.argv[1:])
    summary = write_data(out_dir, results, failed, manifest, tool, seconds, args.jobs, line.strip())
    sys.stdout.write(tables(summary, args.top))
    print(f"\nwrote {os.path.relpath(out_dir, ROOT)}/kernels.csv, reasons.csv, summary.json", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

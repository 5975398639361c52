#!/usr/bin/env python3
"""Adds the kernels of a later real-corpus run (a bench/run --suite real results folder, e.g.
one device call's) to bench/results/real.json: their entries replace the older ones, the run is
listed in `runs`, and real.md is written again, one table per half of the corpus
(bench/benchlib/split.py). Per kernel only report.md, result.json and tritonforge.log are copied
(the optimized sources are the projects' code: not committed).

    python3 bench/merge_real.py NEW_FOLDER [--into bench/results] [--note TEXT] [--min-budget S]
    python3 bench/merge_real.py --rewrite [--into bench/results]

--min-budget S keeps the older entry of a kernel whose new run had a budget below S (the bench's
deadline trimmed it): a figure at a trimmed budget does not replace one at the default.
--rewrite writes real.md (and real.json's summary) again from real.json and the manifest as it
is now, merging nothing: after kernels were added to the manifest, they show as "not measured yet".

A run laid out from another version of the manifest is merged only when each of its kernels was
measured on the source file the manifest names now (the entry's blob); the run records its
manifest's sha256.
"""
import argparse
import json
import pathlib
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from benchlib import real, report, split  # noqa: E402


def stale_kernels(new_doc, manifest):
    """The kernels of a run from another manifest that were not measured on the file the manifest
    names now (no blob recorded, or another one), with why."""
    current = {k.name: k.blob for k in manifest.kernels}
    stale = {}
    for name, k in new_doc["kernels"].items():
        if name not in current:
            stale[name] = "not in the manifest"
        elif k.get("blob") != current[name]:
            stale[name] = f"measured on blob {k.get('blob') or '(not recorded)'}, the manifest says {current[name]}"
    return stale


def write(doc, into, manifest):
    halves = split.halves(manifest)
    doc["summary"] = report.real_summary(doc["kernels"])
    doc["summary"]["halves"] = {h: report.half_summary(doc["kernels"], [n for n, x in halves.items() if x == h])
                                for h in split.HALVES}
    (into / "real.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    (into / "real.md").write_text(report.real_markdown(doc, halves))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("new", type=pathlib.Path, nargs="?")
    p.add_argument("--into", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent / "results")
    p.add_argument("--note", default="")
    p.add_argument("--min-budget", type=float, default=0.0)
    p.add_argument("--rewrite", action="store_true", help="write real.md again from real.json, merging nothing")
    p.add_argument("--manifest", default=real.MANIFEST)
    a = p.parse_args()
    if (a.new is None) == (not a.rewrite):
        p.error("give a results folder to merge, or --rewrite (not both)")
    manifest = real.load_manifest(a.manifest)
    doc = json.loads((a.into / "real.json").read_text())
    if a.rewrite:
        write(doc, a.into, manifest)
        print(f"{a.into}/real.md rewritten ({len(doc['kernels'])} kernels measured, {len(manifest.kernels)} in the manifest)")
        return
    new_doc = json.loads((a.new / "real.json").read_text())
    if new_doc.get("manifest_sha256") != doc.get("manifest_sha256"):
        stale = stale_kernels(new_doc, manifest)
        if stale:
            name, why = next(iter(stale.items()))
            sys.exit(f"{a.new}/real.json: laid out from another manifest ({new_doc.get('manifest_sha256')} against "
                     f"{doc.get('manifest_sha256')}) and {len(stale)} kernel(s) not on today's files: {name}: {why}")
    names = [n for n, k in new_doc["kernels"].items()
             if float(k.get("budget_s") or 0) >= a.min_budget or n not in doc["kernels"]]
    kept = [n for n in new_doc["kernels"] if n not in names]
    for run in new_doc.get("runs", []):
        run = dict(run)
        run.setdefault("manifest_sha256", new_doc.get("manifest_sha256"))
        if a.note:
            run["note"] = a.note
        if kept:
            run["kernels"] = [k for k in run.get("kernels", []) if k not in kept]
            run["not_merged"] = {k: f"budget {new_doc['kernels'][k].get('budget_s')} s, below {a.min_budget:g} s: "
                                    "the earlier entry is kept" for k in kept}
        doc["runs"].append(run)
    for name in names:
        doc["kernels"][name] = new_doc["kernels"][name]
        src = a.new / "real-kernels" / name
        dst = a.into / "real-kernels" / name
        dst.mkdir(parents=True, exist_ok=True)
        for f in ("report.md", "result.json", "tritonforge.log"):
            if (src / f).exists():
                shutil.copyfile(src / f, dst / f)
    doc["updated"] = new_doc.get("updated", doc.get("updated"))
    doc["manifest_sha256"] = new_doc.get("manifest_sha256", doc.get("manifest_sha256"))
    # Which commit measured each kernel now: the last run that lists it.
    commit_of = {}
    for run in doc["runs"]:
        commit = run.get("tritonforge", "").rsplit("commit ", 1)[-1].rstrip(")")
        for k in run.get("kernels", []):
            commit_of[k] = commit
    counts = {}
    for k in doc["kernels"]:
        counts[commit_of.get(k, "?")] = counts.get(commit_of.get(k, "?"), 0) + 1
    version = new_doc.get("tritonforge_version", "").split(" (commit")[0] or "tritonforge"
    doc["tritonforge_version"] = version + " (commits per run below: " + ", ".join(
        f"{c} for {n} kernel{'s' if n > 1 else ''}" for c, n in sorted(counts.items(), key=lambda x: -x[1])) + ")"
    write(doc, a.into, manifest)
    print(f"merged {len(names)} kernel(s): {', '.join(names)}; {a.into}/real.md rewritten")
    if kept:
        print(f"kept the earlier entries of {', '.join(kept)} (budget below {a.min_budget:g} s)")


if __name__ == "__main__":
    main()

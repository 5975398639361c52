#!/usr/bin/env python3
"""Records the Nsight Compute fixtures of tests/data/ncu/ on a GPU machine, then checks that
`tritonforge diagnose` gives each its expected diagnosis (expected.json).

    python3 scripts/gpu/record_ncu_fixtures.py OUT_DIR [--write-fixtures] [--only a,b]

- Every Triton fixture (tests/data/ncu/<name>/kernel.py: KERNEL_NAME, prepare() -> launch) is
  compiled and warmed up in one process, then launched once between cudaProfilerStart/Stop
  under `ncu --set full --profile-from-start off --clock-control none`, filtered by kernel
  name; its TTGIR and PTX are saved as asm.ttgir / asm.ptx.
- The CUDA C fixture (bank_conflicts/kernel.cu) is built with nvcc and profiled on its third
  launch.
- `ncu --import ... --csv --page raw` is split into one raw.csv per fixture (header, units,
  the kernel's row) under OUT_DIR/fixtures/<name>/, and with --write-fixtures also into
  tests/data/ncu/<name>/ (copy OUT_DIR/fixtures/* there to keep them).
- Each is diagnosed with build/tritonforge diagnose --json and compared with expected.json;
  a table is printed last. Exit code 0 when every fixture was recorded and matched.

Environment: TRITONFORGE_NCU (the ncu to run), NVCC (default nvcc), TRITONFORGE_BIN
(default build/tritonforge).
"""

import argparse
import csv
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "data", "ncu")


def find_ncu():
    env = os.environ.get("TRITONFORGE_NCU")
    if env:
        return shutil.which(env) or (env if os.path.exists(env) else None)
    if shutil.which("ncu"):
        return shutil.which("ncu")
    return "/usr/local/cuda/bin/ncu" if os.path.exists("/usr/local/cuda/bin/ncu") else None


def fixture_names(only):
    names = sorted(d for d in os.listdir(FIXTURES)
                   if os.path.isdir(os.path.join(FIXTURES, d)) and d != "handmade")
    return [n for n in names if not only or n in only]


def load_fixture(name):
    path = os.path.join(FIXTURES, name, "kernel.py")
    spec = importlib.util.spec_from_file_location(f"fixture_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def child(asm_dir, names):
    """Runs under ncu: warm every fixture up, then launch each once in the profiled range."""
    import torch
    os.makedirs(asm_dir, exist_ok=True)
    launches = []
    for name in names:
        try:
            mod = load_fixture(name)
            launch = mod.prepare()
            kernel = launch()      # compiles
            launch()
            torch.cuda.synchronize()
        except Exception as exc:  # one broken fixture must not cost the others
            print(f"fixture {name} failed: {type(exc).__name__}: {exc}", flush=True)
            continue
        for key, ext in (("ttgir", "ttgir"), ("ptx", "ptx")):
            text = kernel.asm.get(key) if hasattr(kernel, "asm") else None
            if isinstance(text, str):
                with open(os.path.join(asm_dir, f"{name}.{ext}"), "w") as f:
                    f.write(text)
        launches.append((name, launch))
        print(f"warm: {name}", flush=True)
    torch.cuda.profiler.start()
    for name, launch in launches:
        launch()
        torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print("profiled", len(launches), flush=True)


def run(cmd, log, timeout, **kw):
    t0 = time.time()
    with open(log, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        try:
            p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout, **kw)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return rc, time.time() - t0


def import_csv(ncu, report, out_csv):
    p = subprocess.run([ncu, "--import", report, "--csv", "--page", "raw"], capture_output=True, text=True,
                       timeout=300)
    with open(out_csv, "w") as f:
        f.write(p.stdout)
    return p.returncode == 0


def base_name(name):
    s = name.split("(")[0].strip()
    depth, start = 0, 0
    for i, c in enumerate(s):
        depth += c == "<"
        depth -= c == ">"
        if c == " " and depth == 0:
            start = i + 1
    s = s[start:]
    head, lt, tail = s.partition("<")
    return head.split("::")[-1] + lt + tail


def split_rows(csv_path):
    """(header, units, rows) of a raw-page CSV, skipping ncu's own log lines."""
    with open(csv_path) as f:
        lines = [l for l in f if not l.startswith("==")]
    rows = list(csv.reader(io.StringIO("".join(lines))))
    rows = [r for r in rows if r]
    if len(rows) < 2:
        return None, None, []
    header = rows[0]
    name_col = header.index("Kernel Name") if "Kernel Name" in header else None
    units = rows[1] if name_col is not None and rows[1][name_col] == "" else None
    body = rows[2:] if units else rows[1:]
    return header, units, body


def write_fixture_csv(path, header, units, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(header)
        if units:
            w.writerow(units)
        for r in rows:
            w.writerow(r)


def check(diag, expected):
    """The ways `diag` (one kernel of diagnose --json) misses `expected`; [] when it matches."""
    problems = []
    allowed = expected.get("bottleneck")
    if allowed and diag["bottleneck"] not in allowed:
        problems.append(f"bottleneck {diag['bottleneck']} not in {allowed}")
    found = {f["kind"]: f for f in diag["findings"]}
    for want in expected.get("findings", []):
        f = found.get(want["kind"])
        if f is None:
            problems.append(f"missing {want['kind']}")
            continue
        if f["severity"] < want.get("min_severity", 0):
            problems.append(f"{want['kind']} severity {f['severity']} < {want['min_severity']}")
        detail = f.get("limiter", f.get("reason", f.get("detail")))
        if "detail" in want and detail != want["detail"]:
            problems.append(f"{want['kind']} detail {detail!r} != {want['detail']!r}")
    for kind in expected.get("absent", []):
        if kind in found:
            problems.append(f"unexpected {kind} ({found[kind]['severity']})")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--write-fixtures", action="store_true", help="also write into tests/data/ncu/<name>/")
    ap.add_argument("--only", default="", help="comma-separated fixture names")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--postprocess", action="store_true",
                    help="do not run ncu: split and diagnose the CSVs already in OUT (e.g. fetched from a GPU run)")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    names = fixture_names(only)
    triton_names = [n for n in names if os.path.exists(os.path.join(FIXTURES, n, "kernel.py"))]
    cuda_names = [n for n in names if os.path.exists(os.path.join(FIXTURES, n, "kernel.cu"))]
    if args.child:
        child(args.out, triton_names)
        return 0

    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    ncu = find_ncu()
    if args.postprocess:
        triton_names, cuda_names = [], []
        ncu = ncu or "ncu"
    if not ncu:
        print("record_ncu_fixtures: ncu not found (set TRITONFORGE_NCU)")
        return 1
    kernels = {n: load_kernel_name(n) for n in names}
    csvs = []
    timings = {}
    # Triton fixtures: one process, one ncu run.
    if triton_names:
        filt = "regex:^(" + "|".join(kernels[n] for n in triton_names) + ")$"
        report = os.path.join(out, "triton")
        cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--set", "full",
               "--kernel-name", filt, "--export", report, "--force-overwrite",
               sys.executable, os.path.abspath(__file__), os.path.join(out, "asm"), "--child",
               "--only", ",".join(triton_names)]
        rc, secs = run(cmd, os.path.join(out, "ncu-triton.log"), args.timeout)
        timings["triton"] = secs
        print(f"ncu on {len(triton_names)} Triton fixtures: exit {rc}, {secs:.0f} s")
        if os.path.exists(report + ".ncu-rep") and import_csv(ncu, report + ".ncu-rep", report + ".csv"):
            csvs.append(report + ".csv")
    # CUDA C fixtures: nvcc, then ncu on the third launch.
    for n in cuda_names:
        exe = os.path.join(out, n)
        nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        rc, secs = run([nvcc, "-O2", "-arch=sm_90", "-o", exe, os.path.join(FIXTURES, n, "kernel.cu")],
                       os.path.join(out, f"nvcc-{n}.log"), 120)
        if rc != 0:
            print(f"nvcc {n}: exit {rc} (see nvcc-{n}.log)")
            continue
        report = os.path.join(out, n)
        cmd = [ncu, "--clock-control", "none", "--set", "full", "--kernel-name", f"regex:^{kernels[n]}",
               "--launch-skip", "2", "--launch-count", "1", "--export", report, "--force-overwrite", exe]
        rc, secs = run(cmd, os.path.join(out, f"ncu-{n}.log"), args.timeout)
        timings[n] = secs
        print(f"ncu on {n}: exit {rc}, {secs:.0f} s")
        if os.path.exists(report + ".ncu-rep") and import_csv(ncu, report + ".ncu-rep", report + ".csv"):
            csvs.append(report + ".csv")

    if args.postprocess:
        csvs = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".csv"))
    # Split into one raw.csv per fixture.
    recorded = {}
    for path in csvs:
        header, units, rows = split_rows(path)
        if header is None or "Kernel Name" not in header:
            continue
        col = header.index("Kernel Name")
        for n in names:
            mine = [r for r in rows if base_name(r[col]) == kernels[n]]
            if not mine:
                continue
            dests = [os.path.join(out, "fixtures", n)]
            if args.write_fixtures:
                dests.append(os.path.join(FIXTURES, n))
            for d in dests:
                write_fixture_csv(os.path.join(d, "raw.csv"), header, units, mine[:1])
                for ext in ("ttgir", "ptx"):
                    src = os.path.join(out, "asm", f"{n}.{ext}")
                    if os.path.exists(src):
                        shutil.copy(src, os.path.join(d, f"asm.{ext}"))
                src = os.path.join(FIXTURES, n, "expected.json")
                dst = os.path.join(d, "expected.json")
                if os.path.abspath(src) != os.path.abspath(dst):
                    shutil.copy(src, dst)
            recorded[n] = os.path.join(out, "fixtures", n)

    # Diagnose and compare.
    binary = os.environ.get("TRITONFORGE_BIN") or os.path.join(ROOT, "build", "tritonforge")
    summary = []
    ok_all = True
    for n in names:
        expected = json.load(open(os.path.join(FIXTURES, n, "expected.json")))
        if n not in recorded:
            summary.append((n, "-", "not recorded", "FAIL"))
            ok_all = False
            continue
        d = recorded[n]
        cmd = [binary, "diagnose", "--json", "--ncu-csv", os.path.join(d, "raw.csv"), "--kernel", kernels[n]]
        if "bytes" in expected.get("context", {}):
            cmd += ["--bytes", str(expected["context"]["bytes"])]
        for ext in ("ttgir", "ptx"):
            if os.path.exists(os.path.join(d, f"asm.{ext}")):
                cmd += ["--asm", os.path.join(d, f"asm.{ext}")]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            summary.append((n, "-", p.stderr.strip()[:80], "FAIL"))
            ok_all = False
            continue
        with open(os.path.join(d, "diagnosis.json"), "w") as f:
            f.write(p.stdout)
        diag = json.loads(p.stdout)["kernels"][0]
        problems = check(diag, expected)
        ok_all = ok_all and not problems
        finds = " ".join(f"{f['kind']}:{f['severity']:.2f}" for f in diag["findings"]) or "none"
        summary.append((n, diag["bottleneck"], finds, "ok" if not problems else "FAIL: " + "; ".join(problems)))
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"fixtures": summary, "seconds": timings}, f, indent=2)
    print(f"\n{'fixture':<20} {'bottleneck':<14} {'findings':<60} verdict")
    for n, b, fs, v in summary:
        print(f"{n:<20} {b:<14} {fs:<60} {v}")
    return 0 if ok_all else 1


def load_kernel_name(name):
    py = os.path.join(FIXTURES, name, "kernel.py")
    if os.path.exists(py):
        with open(py) as f:
            for line in f:
                if line.startswith("KERNEL_NAME"):
                    return line.split("=", 1)[1].strip().strip("\"'")
    return f"{name}_kernel"


if __name__ == "__main__":
    sys.exit(main())

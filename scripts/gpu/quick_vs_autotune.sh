#!/usr/bin/env bash
# Times `optimize --effort quick` against @triton.autotune over the tutorial's config list
# (the suite's autotune column) on suite kernels, twice over one results database:
#   cold: the database is empty (the prior and the kernel's own configs only);
#   warm: the database holds the cold run's results (quick warm-starts from them).
# Usage: scripts/gpu/quick_vs_autotune.sh OUT [KERNEL...]   (default: the GEMMs and attention)
# OUT/cold and OUT/warm are bench/run results folders; OUT/summary.txt compares, per kernel,
# tritonforge's wall time and result with autotune's tuning time and result.
set -u
out=$1; shift
names=${*:-matmul_fp16 matmul_bf16 bmm_fp16 matmul_bias_gelu attention}
cd "$(dirname "$0")/../.."
db="$out/results.sqlite"
for pass in cold warm; do
  python3 bench/run --out "$out/$pass" --effort quick --tf-db "$db" --force $names > "$out/$pass.log" 2>&1
  echo "$pass: bench/run exit $?"
done
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
for p in ("cold", "warm"):
    f = out / p / "results.json"
    if not f.exists():
        print(p, "no results.json"); continue
    res = json.loads(f.read_text())
    for name, k in res.get("kernels", {}).items():
        trace, ms_of = [], {}
        rj = out / p / "kernels" / name / "result.json"
        if rj.exists():
            full = json.loads(rj.read_text())
            trace = full.get("trace", [])
            # Per-case times of every candidate, the database's preloaded ones included: a
            # candidate "same source as #N" has the times of N.
            for c in full.get("candidates", []):
                ms_of[c["id"]] = [(x.get("timing") or {}).get("median_ms") for x in c.get("cases", [])]
        def times(d):
            if d.get("time_ms"):
                return d["time_ms"]
            m = d.get("message", "")
            if m.startswith("same source as #"):
                return ms_of.get(int(m.split("#")[1]), [])
            return []
        cases = k.get("cases", [])
        at_ms = [c.get("autotune", {}).get("ms") for c in cases]
        tf_ms = [c.get("tritonforge", {}).get("ms") for c in cases]
        at_s = sum(c.get("autotune", {}).get("tuning_s") or 0 for c in cases)
        # When the search first had a candidate as fast as autotune's result on every case (1%
        # slack: the bench times autotune, tritonforge times its candidates, with one method),
        # by the time its measurement ended (done_s), not when its round was recorded.
        done = sorted(((e["data"]["done_s"], times(e["data"])) for e in trace
                       if e.get("kind") == "candidate" and e["data"].get("status") == "ok"
                       and "done_s" in e["data"] and len(times(e["data"])) == len(at_ms)), key=lambda x: x[0])
        reached = next((t for t, ms in done if all(a and m is not None and m <= a * 1.01
                                                   for m, a in zip(ms, at_ms))), None)
        first = lambda kind: next((e["t"] for e in trace if e.get("kind") == kind), None)
        pool = next((e["data"] for e in trace if e.get("kind") == "compile-pool"), {})
        print(f"{p} {name}: tritonforge {tf_ms} ms, wall {k.get('tritonforge', {}).get('wall_s')} s; autotune {at_ms} ms, tuning {at_s:.1f} s; "
              f"autotune's result reached at {reached} s; events: run {first('run')}, baseline {first('baseline')}, "
              f"pool ready {pool.get('ready_s')}, joined {pool.get('joined_s')}, stop {first('stop')}")
PY

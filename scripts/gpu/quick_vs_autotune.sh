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
        trace = []
        rj = out / p / "kernels" / name / "result.json"
        if rj.exists():
            trace = json.loads(rj.read_text()).get("trace", [])
        for c in k.get("cases", []):
            tf, at = c.get("tritonforge", {}), c.get("autotune", {})
            tf_ms, at_ms = tf.get("ms"), at.get("ms")
            # When the search first measured a candidate at least as fast as autotune's result
            # (1% slack: the two are timed by different harnesses).
            reached = next((e["t"] for e in trace if e.get("kind") == "candidate"
                            and e["data"].get("status") == "ok" and at_ms
                            and e["data"].get("objective", 1e9) <= at_ms * 1.01), None)
            run_t = next((e["t"] for e in trace if e.get("kind") == "run"), None)
            base_t = next((e["t"] for e in trace if e.get("kind") == "baseline"), None)
            print(f"{p} {name}: tf {tf_ms} ms, wall {k.get('wall_s')} s (run event {run_t}, baseline {base_t}, "
                  f"autotune's result reached at {reached}); autotune {at_ms} ms in {at.get('tuning_s')} s")
PY

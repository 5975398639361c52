#!/usr/bin/env bash
# Records exhaustive sweeps of the example matmul (examples/matmul) on the GPU, in the
# replay format of `tritonforge tune --replay`, and checks the two targets of the search:
#
#   scripts/gpu/record_sweeps.sh OUT_DIR          (on the H200; needs build/tritonforge)
#
# For each shape (4096^3, and a long-K small-MN 512x512x16384):
#   1. `optimize --strategy exhaustive` over the example's space without 16-wide tiles and
#      2 warps (BLOCK_M/N 32..256, BLOCK_K 32..128, 4 or 8 warps, 2..5 stages: ~320 valid
#      configurations after static pruning), 20 ms of timing per configuration, one
#      verification seed, every measurement stored in OUT_DIR/sweeps.sqlite;
#   2. `db export` of that run -> OUT_DIR/matmul_<shape>.csv (commit these to
#      tests/data/sweeps/; the replay benchmark test reads whatever is there);
#   3. unless COMPARE=0: `optimize` as a user runs it (default strategy, 60 s budget, a fresh
#      database) over the same space, and its confirmed best against the sweep's optimum;
#   4. the replay benchmark on the new CSV: the default strategy within 3% of the optimum
#      using 10% of the configurations, in how many of 10 seeds (random search alongside).
# Prints a short table last. About 5 minutes of GPU time (2 x ~100 s sweeps, 2 x 60 s
# optimize runs); SHAPES="4096" records one shape only; SHAPES="softmax layernorm" sweeps
# those examples' whole spaces the same way (about 1 minute each), for the check that
# `optimize` is as fast as an exhaustive search there too.
set -u
cd "$(dirname "$0")/../.."
OUT=${1:?usage: scripts/gpu/record_sweeps.sh OUT_DIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BIN=$(pwd)/build/tritonforge
[ -x "$BIN" ] || { echo "build/tritonforge is missing: build it first"; exit 2; }
export TRITONFORGE_PYTHON=${TRITONFORGE_PYTHON:-python3}
PY=${PY:-python3}   # for this script's own small helpers
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d /tmp/tf-sweeps-XXXX)
COMPARE=${COMPARE:-1}
SHAPES=${SHAPES:-"4096 longk"}
ONLY=(--only BLOCK_M=32,64,128,256 --only BLOCK_N=32,64,128,256 --only BLOCK_K=32,64,128 --only num_warps=4,8)
TABLE="$OUT/table.txt"
: > "$TABLE"

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader 2>&1
  "$PY" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" 2>&1
  "$BIN" --version
} > "$OUT/env.txt"

write_task() {  # DIR M N K ATOL
  mkdir -p "$1"
  cp examples/matmul/matmul.py examples/matmul/matmul_harness.py "$1/"
  cat > "$1/task.toml" <<TOML
name = "matmul_${2}x${3}x${4}"
source = "matmul.py"
launcher = "matmul"
harness = "matmul_harness.py"
cases = [ { M = $2, N = $3, K = $4 } ]

[check]
rtol = 2e-3
atol = $5
seeds = 1
TOML
}

json_get() {  # FILE PYTHON-EXPRESSION-ON-j
  "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null || echo "?"
}

for shape in $SHAPES; do
  only=("${ONLY[@]}")
  case "$shape" in
    4096) M=4096; N=4096; K=4096; ATOL=5e-2 ;;
    longk) M=512; N=512; K=16384; ATOL=1e-1 ;;
    softmax|layernorm) only=() ;;   # the example as it is, its whole space
    *) echo "unknown shape $shape"; continue ;;
  esac
  if [ ${#only[@]} -eq 0 ]; then
    name="$shape"
    task="$WORK/$name"
    mkdir -p "$task"
    cp examples/$shape/* "$task/"
  else
    name="matmul_${M}x${N}x${K}"
    task="$WORK/$name"
    write_task "$task" $M $N $K $ATOL
  fi
  t0=$(date +%s)
  timeout 260 "$BIN" -v optimize "$task/task.toml" --strategy exhaustive --stall-rounds 0 --budget 230 --no-passes --engine none \
      --timing-ms 20 "${only[@]}" --db "$OUT/sweeps.sqlite" --fresh --out "$WORK/out" --json \
      > "$OUT/$name.sweep.json" 2> "$OUT/$name.sweep.log"
  rc=$?
  t1=$(date +%s)
  run=$(json_get "$OUT/$name.sweep.json" "j['database']['run_id']")
  valid=$(json_get "$OUT/$name.sweep.json" "[e['data'].get('valid') for e in j['trace'] if e['kind']=='space'][0]")
  stop=$(json_get "$OUT/$name.sweep.json" "j['search']['stopped_because']")
  if [ "$run" != "?" ]; then
    "$BIN" db --db "$OUT/sweeps.sqlite" export --run "$run" --meta elem_bytes=2 --meta dots=1 \
        --meta "source=scripts/gpu/record_sweeps.sh" -o "$OUT/$name.csv"
  fi
  rows=$(grep -v '^#' "$OUT/$name.csv" 2>/dev/null | tail -n +2 | wc -l)
  failed=$(grep -v '^#' "$OUT/$name.csv" 2>/dev/null | tail -n +2 | awk -F, '$(NF-1)==""' | wc -l)
  best=$("$PY" - "$OUT/$name.csv" <<'PY' 2>/dev/null || echo "?"
import sys
rows = [l.strip().split(",") for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
head, body = rows[0], rows[1:]
ok = [r for r in body if r[-2]]
b = min(ok, key=lambda r: float(r[-2]))
print(" ".join(f"{h}={v}" for h, v in zip(head[:-2], b[:-2])), f"{float(b[-2]):.4f}")
PY
)
  echo "sweep $name: exit $rc, $((t1 - t0)) s, run #$run, $rows rows of $valid valid ($failed failed), stopped: $stop; best $best" | tee -a "$TABLE"

  if [ "$COMPARE" = "1" ]; then
    t0=$(date +%s)
    rm -f "$OUT/compare-$name.sqlite"*
    timeout 120 "$BIN" -v optimize "$task/task.toml" --budget 60 "${only[@]}" --db "$OUT/compare-$name.sqlite" \
        --out "$WORK/compare" --json > "$OUT/$name.optimize.json" 2> "$OUT/$name.optimize.log"
    rc=$?
    t1=$(date +%s)
    opt=$(json_get "$OUT/$name.optimize.json" "'%s %.4f ms (%d candidates, %s, stopped: %s)' % (j['best'].get('config_text'), j['best']['per_case'][0]['time_ms'], j['search']['evaluated'], j['search']['strategy'], j['search']['stopped_because'])")
    ratio=$("$PY" - "$OUT/$name.optimize.json" "$OUT/$name.csv" <<'PY' 2>/dev/null || echo "?"
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = [r for r in csv.DictReader(l for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")) if r["time_ms"]]
opt = min(float(r["time_ms"]) for r in rows)
# The same configuration in the sweep: measured the same way as the optimum (short timing,
# one after another); the confirmation's own time is taken over a longer, hotter run.
chosen = {k.split(".")[-1]: str(v) for k, v in j["best"].get("config", {}).items()}
same = [r for r in rows if all(r.get(p) == v for p, v in chosen.items() if p in r)]
if same:
    print(f"{float(same[0]['time_ms']) / opt:.3f} (its sweep time over the sweep's optimum; confirmation time / optimum "
          f"{j['best']['per_case'][0]['time_ms'] / opt:.3f})")
else:
    print(f"{j['best']['per_case'][0]['time_ms'] / opt:.3f} (confirmation time over the sweep's optimum)")
PY
)
    echo "optimize $name: exit $rc, $((t1 - t0)) s wall; best $opt; ratio $ratio (<= ~1.02: as fast as exhaustive)" | tee -a "$TABLE"
  fi

  if [ -s "$OUT/$name.csv" ] && [ "$rows" -ge 50 ]; then
    budget=$((rows / 10))
    for strategy in auto random; do
      within=0
      for seed in 0 1 2 3 4 5 6 7 8 9; do
        gap=$("$BIN" tune --replay "$OUT/$name.csv" --strategy $strategy --max-evals $budget --seed $seed --json 2>/dev/null |
              "$PY" -c "import json,sys; print(json.load(sys.stdin).get('gap', 1))" 2>/dev/null || echo 1)
        within=$("$PY" -c "print($within + (1 if $gap <= 0.03 else 0))")
      done
      echo "replay $name: $strategy within 3% of the optimum with $budget evaluations in $within/10 seeds" | tee -a "$TABLE"
    done
  fi
done
rm -rf "$WORK"
echo "===== record_sweeps: files in $OUT"
ls -l "$OUT"
echo "===== summary"
cat "$OUT/env.txt"
cat "$TABLE"

#!/usr/bin/env bash
# Issue 17's measurements on a host with two GPUs (two H200s): the same work on one GPU and on
# two, with the wall time of each, so that what --gpus buys can be read off one table.
#
#   scripts/gpu/multi_gpu.sh OUT_DIR            (or: scripts/gpu-run.sh script:scripts/gpu/multi_gpu.sh)
#
# Needs $TF_BUILD/tritonforge (default build/), python3 with torch and triton, two CUDA GPUs.
# Steps (each logs under OUT_DIR; a failed step does not stop the others):
#   1. env        nvidia-smi, versions                                             env.txt
#   2. one-task   optimize examples/matmul with --gpus 1 then --gpus 2: the same seed, strategy
#                 and candidate cap, --no-db, so both measure the same candidates; the result
#                 (best configuration, speed-up) should agree within the noise and the wall time
#                 should drop                                                       one-task-gpus{1,2}/
#   3. tasks      optimize on the three examples at once (examples/*/task.toml) with --gpus 1
#                 then --gpus 2 (one task per GPU at a time)                        tasks-gpus{1,2}/
#   4. bench      bench/run on four suite kernels with --gpus 1 then --gpus 2       bench-gpus{1,2}/
# A table of wall times and speed-ups is printed last (and kept in summary.txt).
# Environment: TF_MULTI_BUDGET (optimize's budget per task, default 60), TF_MULTI_CAP
# (--max-candidates of step 2, default 48), TF_MULTI_BENCH (the kernels of step 4, comma
# separated; default softmax,layernorm,matmul_fp16,rmsnorm).
set -u
cd "$(dirname "$0")/../.."
mkdir -p "${1:?usage: scripts/gpu/multi_gpu.sh OUT_DIR}"
OUT=$(cd "$1" && pwd)
export TRITONFORGE_PYTHON=${TRITONFORGE_PYTHON:-python3}
BUILD=$(cd "${TF_BUILD:-build}" && pwd)
BIN=$BUILD/tritonforge
export PYTHONUNBUFFERED=1
BUDGET=${TF_MULTI_BUDGET:-60}
CAP=${TF_MULTI_CAP:-48}
BENCH=${TF_MULTI_BENCH:-softmax,layernorm,matmul_fp16,rmsnorm}
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"

now() { date +%s.%N; }
row() { printf '%-34s %10s %s\n' "$1" "$2" "$3" | tee -a "$SUMMARY"; }
speedups() {  # the speed-ups of the result files under $1
  python3 - "$1" <<'PY'
import glob, json, sys
out = []
for p in sorted(glob.glob(sys.argv[1] + "/**/result.json", recursive=True)):
    r = json.load(open(p))
    out.append(f"{r['task']['name']} {r.get('speedup', 0):.3f}x ({(r.get('best') or {}).get('config_text', '?')})")
print("; ".join(out) or "no result")
PY
}

{
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())"
  "$BIN" --version
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
row "step" "wall s" "result"

for n in 1 2; do
  t0=$(now)
  "$BIN" optimize examples/matmul/task.toml --gpus $n --out "$OUT/one-task-gpus$n" --no-db --seed 0 \
    --strategy bayes --max-candidates "$CAP" --stall-rounds 0 --budget "$BUDGET" > "$OUT/one-task-gpus$n.log" 2>&1
  rc=$?
  row "optimize matmul --gpus $n (rc $rc)" "$(python3 -c "print(f'{$(now) - $t0:.1f}')")" "$(speedups "$OUT/one-task-gpus$n")"
done

for n in 1 2; do
  t0=$(now)
  "$BIN" optimize examples/*/task.toml --gpus $n --out "$OUT/tasks-gpus$n" --no-db --budget "$BUDGET" \
    > "$OUT/tasks-gpus$n.log" 2>&1
  rc=$?
  row "optimize 3 tasks --gpus $n (rc $rc)" "$(python3 -c "print(f'{$(now) - $t0:.1f}')")" "$(speedups "$OUT/tasks-gpus$n")"
done

for n in 1 2; do
  t0=$(now)
  python3 bench/run ${BENCH//,/ } --gpus $n --out "$OUT/bench-gpus$n" --tritonforge "$BIN" --budget 20 \
    --deadline 600 > "$OUT/bench-gpus$n.log" 2>&1
  rc=$?
  row "bench/run ${BENCH} --gpus $n (rc $rc)" "$(python3 -c "print(f'{$(now) - $t0:.1f}')")" \
    "$(tail -1 "$OUT/bench-gpus$n.log" | cut -c1-120)"
done

echo
cat "$SUMMARY"

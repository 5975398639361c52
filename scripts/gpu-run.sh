#!/usr/bin/env bash
# Runs steps on a GPU machine (the device tool's H200, or any CUDA machine) and packs every
# log and result into $OUT/gpu-results.tar.gz (one file: the device tool returns few).
#
#   scripts/gpu-run.sh env optimize:matmul,softmax,layernorm tests
#
# Steps: env (versions, ldd), optimize:<examples> (tritonforge optimize on examples/<name>),
# tests (the GPU-labelled tests: carry build/tests/tf_gpu_tests too; $TF_GTEST_FILTER narrows
# them), bench:<args> (bench/run, arguments comma separated),
# script:<path>[,args] (any GPU script of the repo, its first argument the output folder).
# BENCH_SEED=DIR adds the bench steps' results to an earlier call's (see below).
# Needs build/tritonforge.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tritonforge-gpu-out}
WORK=$(mktemp -d /tmp/tf-gpu-XXXX)
mkdir -p "$OUT" "$WORK"
export TRITONFORGE_PYTHON=${TRITONFORGE_PYTHON:-python3}
export PYTHONUNBUFFERED=1
BIN=./build/tritonforge
SUMMARY="$WORK/summary.txt"
: > "$SUMMARY"

step_env() {
  {
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
    python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
    nproc; free -g | head -2
    ldd "$BIN"
    "$BIN" --version
  } > "$WORK/env.txt" 2>&1
  cat "$WORK/env.txt"
}

step_optimize() {
  local names=$1
  for name in ${names//,/ }; do
    local t0=$(date +%s.%N)
    timeout 400 "$BIN" -v optimize "examples/$name/task.toml" --out "$WORK/optimize" ${TF_OPT_FLAGS:-} \
      > "$WORK/optimize-$name.log" 2>&1
    local rc=$?
    local t1=$(date +%s.%N)
    echo "optimize $name: exit $rc, $(python3 -c "print(round($t1-$t0,1))") s wall" | tee -a "$SUMMARY"
    tail -n 12 "$WORK/optimize-$name.log" | tee -a "$SUMMARY"
  done
}

step_tests() {
  if [ -x build/tests/tf_gpu_tests ]; then
    TRITONFORGE_SOURCE_DIR=$PWD TRITONFORGE_BINARY_DIR=$PWD/build build/tests/tf_gpu_tests \
      ${TF_GTEST_FILTER:+--gtest_filter=$TF_GTEST_FILTER} > "$WORK/gtest-gpu.log" 2>&1
    echo "gtest gpu: exit $?" | tee -a "$SUMMARY"
    grep -E "^\[  (FAILED|PASSED|SKIPPED) |OK \]" "$WORK/gtest-gpu.log" | tee -a "$SUMMARY"
  fi
  python3 -m pytest -q -rP -m gpu tests/python > "$WORK/pytest-gpu.log" 2>&1
  echo "pytest gpu: exit $?" | tee -a "$SUMMARY"
  tail -n 15 "$WORK/pytest-gpu.log" | tee -a "$SUMMARY"
}

BENCH_RUNS=0
# BENCH_SEED=DIR: a results folder of an earlier call (its results.json, kernels/) that this
# call's bench steps add to, so one table can be measured over several device calls.
if [ -n "${BENCH_SEED:-}" ] && [ -d "$BENCH_SEED" ]; then mkdir -p "$WORK/bench" && cp -r "$BENCH_SEED"/. "$WORK/bench/"; fi
step_bench() {
  BENCH_RUNS=$((BENCH_RUNS + 1))
  local log="$WORK/bench-$BENCH_RUNS.log"
  python3 bench/run --out "$WORK/bench" ${1//,/ } > "$log" 2>&1
  echo "bench ${1//,/ }: exit $?" | tee -a "$SUMMARY"
  tail -n 40 "$log" | tee -a "$SUMMARY"
}

for step in "$@"; do
  case "$step" in
    env) step_env ;;
    optimize:*) step_optimize "${step#optimize:}" ;;
    tests) step_tests ;;
    bench:*) step_bench "${step#bench:}" ;;
    script:*) spec=${step#script:}; path=${spec%%,*}; rest=""; [ "$spec" != "$path" ] && rest=${spec#*,}
              mkdir -p "$WORK/$(basename "$path")"
              timeout 500 "$path" "$WORK/$(basename "$path")" ${rest//,/ } > "$WORK/$(basename "$path").log" 2>&1
              echo "script $path: exit $?" | tee -a "$SUMMARY"; tail -n 25 "$WORK/$(basename "$path").log" | tee -a "$SUMMARY" ;;
    *) echo "unknown step $step" ;;
  esac
done
tar -czf "$OUT/gpu-results.tar.gz" -C "$WORK" .
echo "===== summary"
cat "$SUMMARY"

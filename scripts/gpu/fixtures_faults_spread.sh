#!/usr/bin/env bash
# Nsight Compute fixtures, planted faults and timing spread, checked on a GPU machine (the device tool's H200), about five minutes:
#
#   scripts/gpu/fixtures_faults_spread.sh OUT_DIR
#
# Needs $TF_BUILD/tritonforge, $TF_BUILD/tests/tf_unit_tests and $TF_BUILD/tests/tf_gpu_tests
# (TF_BUILD defaults to build; build them on the CPU machine and carry the folder; a missing
# test binary skips its step), python3 with torch and triton, ncu and nvcc on PATH.
# Steps (each logs under OUT_DIR; a failed step does not stop the others):
#   1. env        GPU, driver, versions, ldd of the binary                       env.txt
#   2. fixtures   records the Nsight Compute fixtures of tests/data/ncu and checks each
#                 diagnosis (scripts/gpu/record_ncu_fixtures.py); copy
#                 OUT_DIR/ncu-fixtures/fixtures/* into tests/data/ncu/ to keep them   ncu-fixtures/
#   3. faults     tf_gpu_tests: every planted fault rejected with the right status     gpu-tests.log
#   4. spread     `profile examples/softmax/task.toml` 10 times: spread of the medians  spread/
#   5. ncu        `profile --ncu` on case 0 of each example, with its wall time         profile-ncu-*.json
# A table is printed last. TRITONFORGE_CACHE_DIR is OUT_DIR/cache: the GPU's measured
# ceilings are kept there (cache/ceilings/*.json).
set -u
cd "$(dirname "$0")/../.."
mkdir -p "${1:?usage: scripts/gpu/fixtures_faults_spread.sh OUT_DIR}"
OUT=$(cd "$1" && pwd)
export TRITONFORGE_PYTHON=${TRITONFORGE_PYTHON:-python3}
BUILD=$(cd "${TF_BUILD:-build}" && pwd)
export TRITONFORGE_SOURCE_DIR=$PWD TRITONFORGE_BINARY_DIR=$BUILD TRITONFORGE_BIN=$BUILD/tritonforge
export TRITONFORGE_CACHE_DIR=$OUT/cache
export PYTHONUNBUFFERED=1
BIN=$BUILD/tritonforge
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
T_START=$(date +%s)
note() { echo "$*" | tee -a "$SUMMARY"; }
since() { echo $(( $(date +%s) - $1 )); }

# 1. environment
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
  ncu --version | tail -n 1
  nvcc --version | tail -n 1
  ldd "$BIN"
  "$BIN" --version
} > "$OUT/env.txt" 2>&1
note "env: $(head -n 3 "$OUT/env.txt" | tail -n 1)"

# 2. Nsight Compute fixtures
t=$(date +%s)
timeout 300 python3 scripts/gpu/record_ncu_fixtures.py "$OUT/ncu-fixtures" --write-fixtures \
  > "$OUT/ncu-fixtures.log" 2>&1
note "fixtures: exit $?, $(since "$t") s"
if [ -x "$BUILD/tests/tf_unit_tests" ]; then
  "$BUILD/tests/tf_unit_tests" --gtest_filter='Recorded/NcuFixture*:NcuFixtures*' > "$OUT/fixtures-gtest.log" 2>&1
  note "fixtures gtest: exit $?, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/fixtures-gtest.log" | tr '\n' ' ')"
else
  note "fixtures gtest: skipped ($BUILD/tests/tf_unit_tests not built)"
fi

# 3. planted faults
t=$(date +%s)
if [ -x "$BUILD/tests/tf_gpu_tests" ]; then
  timeout 300 "$BUILD/tests/tf_gpu_tests" > "$OUT/gpu-tests.log" 2>&1
  note "faults (tf_gpu_tests): exit $?, $(since "$t") s, $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/gpu-tests.log" | tr '\n' ' ')"
else
  note "faults: skipped ($BUILD/tests/tf_gpu_tests not built)"
fi

# 4. spread of 10 profiles of the same kernel
t=$(date +%s)
mkdir -p "$OUT/spread"
for i in 1 2 3 4 5 6 7 8 9 10; do
  timeout 120 "$BIN" profile examples/softmax/task.toml --case 0 --budget-ms 300 --json \
    > "$OUT/spread/run$i.json" 2> "$OUT/spread/run$i.err"
done
note "spread: 10 profiles in $(since "$t") s"

# 5. profile --ncu on each example
for ex in softmax matmul layernorm; do
  t=$(date +%s)
  timeout 240 "$BIN" profile "examples/$ex/task.toml" --ncu --case 0 --json --out "$OUT/ncu-$ex" \
    > "$OUT/profile-ncu-$ex.json" 2> "$OUT/profile-ncu-$ex.err"
  echo "$? $(since "$t")" > "$OUT/profile-ncu-$ex.status"
done

python3 - "$OUT" <<'PY' | tee -a "$SUMMARY"
import json, os, statistics, sys
out = sys.argv[1]
meds, noise = [], []
for i in range(1, 11):
    try:
        j = json.load(open(f"{out}/spread/run{i}.json"))
        t = j["cases"][0]["timing"]
        meds.append(t["median_ms"]); noise.append(t["noise"])
    except Exception as exc:
        print(f"spread run {i}: no timing ({type(exc).__name__})")
if meds:
    m = statistics.median(meds)
    spread = (max(meds) - min(meds)) / m
    json.dump({"medians_ms": meds, "noise": noise, "spread": spread}, open(f"{out}/spread/summary.json", "w"), indent=2)
    print(f"softmax case 0, {len(meds)} profiles: median {m:.4f} ms, spread (max-min)/median {100*spread:.2f}% "
          f"(target < 2%), per-run noise (IQR/median) {100*min(noise):.2f}..{100*max(noise):.2f}%")
print(f"\n{'example':<10} {'exit':>4} {'wall s':>6} {'status':<8} {'median ms':>9} {'roofline':>8} {'ncu s':>6} "
      f"bottleneck / findings")
for ex in ("softmax", "matmul", "layernorm"):
    try:
        rc, wall = open(f"{out}/profile-ncu-{ex}.status").read().split()
        j = json.load(open(f"{out}/profile-ncu-{ex}.json"))
        c = j["cases"][0]
        k = c["kernels"][0]
        d = k["diagnosis"]
        roof = c.get("roofline", {}).get("percent")
        ncu = c.get("ncu", {})
        finds = ", ".join(f"{f['kind']}:{f['severity']:.2f}" for f in d["findings"]) or "none"
        roof_s = f"{roof:.1f}%" if roof is not None else "-"
        ncu_s = f"{ncu.get('seconds', 0):.1f}" if ncu.get("used") else "no"
        med = c.get("timing", {}).get("median_ms", 0)
        print(f"{ex:<10} {rc:>4} {wall:>6} {c['status']:<8} {med:>9.4f} {roof_s:>8} {ncu_s:>6} "
              f"{d['bottleneck']} ({d['basis']}) / {finds}")
        if not ncu.get("used"):
            print(f"{'':<10} ncu: {ncu.get('reason')}")
    except Exception as exc:
        print(f"{ex:<10} failed: {type(exc).__name__}: {exc}")
PY
note "total: $(since "$T_START") s"
echo "===== fixtures"
tail -n 13 "$OUT/ncu-fixtures.log"
echo "===== summary"
cat "$SUMMARY"

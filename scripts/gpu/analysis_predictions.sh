#!/usr/bin/env bash
# Checks `tritonforge analyze`'s predictions on the GPU (an H200, or any sm_90 CUDA machine):
#   1. coalescing: kernels built to show coalesced / strided accesses; analyze's predicted
#      sectors per request next to Nsight Compute's l1tex sectors / requests;
#   2. shared memory: a matmul configuration analyze prunes (5 stages, 240 KiB) must fail to
#      launch, the one it keeps (4 stages, 192 KiB) must run and be right.
# Writes everything under OUTDIR, with the Markdown record OUTDIR/analysis-vs-h200.md (copy it
# to docs/analysis-vs-h200.md), and prints a short table last. About a minute.
#
#   scripts/gpu/analysis_predictions.sh OUTDIR        (needs build/tritonforge, python3 with torch + triton, ncu)
set -u
OUT=${1:?usage: scripts/gpu/analysis_predictions.sh OUTDIR}
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export TRITONFORGE_PYTHON=${TRITONFORGE_PYTHON:-python3}
export PYTHONUNBUFFERED=1
BIN=./build/tritonforge
A=scripts/gpu/analysis

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" 2>&1
  ncu --version 2>&1 | tail -1
} > "$OUT/env.txt"
cat "$OUT/env.txt"

echo "== predictions (tritonforge analyze)"
timeout 300 "$BIN" analyze "$A/access_patterns.py" --cases "$A/access_patterns.toml" --json --compile-limit 8 \
  > "$OUT/analyze-access.json" 2> "$OUT/analyze-access.err"; echo "analyze access: exit $?"
for which in kept pruned; do
  timeout 300 "$BIN" analyze "$A/smem_configs.py" --cases "$A/smem_configs.toml" --launcher "launch_$which" --json \
    > "$OUT/analyze-smem-$which.json" 2> "$OUT/analyze-smem-$which.err"; echo "analyze smem $which: exit $?"
done

echo "== Nsight Compute on the access-pattern kernels"
METRICS=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
timeout 300 ncu --clock-control none --metrics "$METRICS" --kernel-name regex:'copy_|transpose_' -f -o "$OUT/access" \
  python3 "$A/driver.py" access > "$OUT/ncu-access.log" 2>&1; echo "ncu: exit $?"
ncu --import "$OUT/access.ncu-rep" --csv --page raw > "$OUT/access-raw.csv" 2>> "$OUT/ncu-access.log"

echo "== launching the kept and the pruned configuration"
timeout 300 python3 "$A/driver.py" smem > "$OUT/smem.jsonl" 2> "$OUT/smem.err"; echo "smem launches: exit $?"

python3 "$A/report.py" "$OUT"

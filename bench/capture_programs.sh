#!/usr/bin/env bash
# Program to overlay on the GPU, for the programs of bench/programs/ (docs/capture.md, Measured):
#   bench/capture_programs.sh check PROGRAM...   each program run once plainly, then captured
#                                                inside torch.profiler (capture's per-kernel GPU
#                                                time against the profiler's, same run) and
#                                                without recording (the capture's overhead)
#   bench/capture_programs.sh full PROGRAM [BUDGET_S (40)] [TOP (3)]
#                                                capture --optimize, then run --overlay --compare
# Results go to $OUT/<program>/ (default /tmp/capture-programs); saved tensors are left out; each
# task's task.toml, replay_check.json and result.json are also copied flat into $OUT/<program>/tasks/.
# Needs the binary at $TF (default build/tritonforge), TRITONFORGE_PYTHON, and the programs'
# packages importable (the device tool carries their wheels: see docs/capture.md).
set -u
mode=${1:?check or full}; shift
TF=${TF:-build/tritonforge}
PY=${TRITONFORGE_PYTHON:-python3}
root=${OUT:-/tmp/capture-programs}
steps=${STEPS:-3}

now() { date +%s.%N; }

check_one() {
  local prog=$1 out=$root/$(basename "$1" .py)
  mkdir -p "$out"
  "$PY" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())" >"$out/versions.txt" 2>&1
  local t0 t1 t2
  t0=$(now); "$PY" "$prog" $steps >"$out/plain.log" 2>&1; echo "plain rc=$?" >>"$out/plain.log"
  t1=$(now)
  "$TF" capture --no-save -o "$out/profiled" -- "$PY" bench/programs/profile_program.py "$out/profiler.json" "$prog" $steps \
    >"$out/profiled.log" 2>&1; echo "profiled rc=$?" >>"$out/profiled.log"
  t2=$(now)
  "$TF" capture --top 0 --timing profiler -o "$out/recorded" -- "$PY" "$prog" $steps >"$out/recorded.log" 2>&1; echo "recorded rc=$?" >>"$out/recorded.log"
  local t3; t3=$(now)
  echo "{\"plain_s\": $("$PY" -c "print(round($t1 - $t0, 2))"), \"recorded_no_save_s\": $("$PY" -c "print(round($t3 - $t2, 2))")}" >"$out/wall.json"
}

full_one() {
  local prog=$1 budget=${2:-40} top=${3:-3} out=$root/$(basename "$1" .py)
  mkdir -p "$out"
  local t0 t1; t0=$(now)
  "$TF" capture --timing profiler -o "$out/cap" --top "$top" --optimize --budget "$budget" -- "$PY" "$prog" $steps >"$out/capture.log" 2>&1
  echo "capture rc=$?" >>"$out/capture.log"
  t1=$(now)
  "$TF" run --overlay "$out/cap" --compare --repeat "${REPEAT:-2}" -- "$PY" "$prog" $steps >"$out/run.log" 2>&1
  echo "run rc=$?" >>"$out/run.log"
  echo "{\"capture_and_optimize_s\": $("$PY" -c "print(round($t1 - $t0, 2))")}" >"$out/wall-full.json"
  rm -rf "$out/cap/data" "$out/cap/optimized"/*/work 2>/dev/null
  find "$out/cap" -name '*.bin' -delete
  # The device tool brings back folders a few levels deep only: each task's check, its task file
  # and its search's result, flat under $out/tasks/.
  mkdir -p "$out/tasks"
  for t in "$out"/cap/tasks/*/; do
    local n; n=$(basename "$t")
    cp "$t/task.toml" "$out/tasks/$n.task.toml" 2>/dev/null
    cp "$t/replay_check.json" "$out/tasks/$n.replay_check.json" 2>/dev/null
    cp "$out/cap/optimized/$n/result.json" "$out/tasks/$n.result.json" 2>/dev/null
  done
  true
}

case $mode in
  check) for p in "$@"; do check_one "$p"; done ;;
  full) full_one "$@" ;;
  *) echo "capture_programs.sh: unknown mode '$mode' (check or full)" >&2; exit 2 ;;
esac

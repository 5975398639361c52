#!/usr/bin/env bash
# The main job on a bundled example: sets everything up, then optimizes the fp16 matmul
# written the naive way (examples/matmul). Results go to tritonforge-out/matmul/.
# Without a CUDA GPU it still analyses the kernel and compiles it for sm_90, and says what
# it needs a GPU for.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export TRITONFORGE_PYTHON="$(scripts/python-for-worker.sh)"
task=${1:-examples/matmul/task.toml}
set +e
build/tritonforge optimize "$task" --out tritonforge-out
rc=$?
set -e
if [ "$rc" -eq 3 ]; then
  echo "example: this machine has no CUDA GPU, so only the analysis and compile checks ran (see above)."
  exit 0
fi
exit "$rc"

#!/usr/bin/env bash
# Every test: sets everything up, then runs the C++ tests (CTest) and the Python tests
# (pytest). Tests that need a CUDA GPU are reported as skipped where there is none; on a
# GPU machine they run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
export TRITONFORGE_PYTHON="$(scripts/python-for-worker.sh)"
echo "test: worker python is $TRITONFORGE_PYTHON"
(cd build && ctest --output-on-failure --timeout 900)
"$TRITONFORGE_PYTHON" -m pytest -q tests/python bench/tests

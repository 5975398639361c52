#!/usr/bin/env bash
# Installs what tritonforge needs on a fresh Debian or Ubuntu machine and builds it.
# Idempotent: a second run only rebuilds what changed.
#   - C++ dependencies from Debian's packages (apt-get; sudo when not root)
#   - a Python virtual environment .venv with Triton (python/requirements.txt; no GPU needed)
#   - build/tritonforge and the tests, with CMake
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PKGS="cmake g++ make libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev libdtl-dev libsqlite3-dev libgtest-dev libeigen3-dev"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if ! python3 -c "import venv, ensurepip" >/dev/null 2>&1; then missing="$missing python3 python3-venv"; fi
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import triton, numpy, pytest" >/dev/null 2>&1; then
  echo "setup: installing Python packages into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r python/requirements.txt
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"

#!/usr/bin/env bash
# Installs what tritonforge needs on a fresh Debian or Ubuntu machine and builds it.
# Idempotent: a second run only rebuilds what changed.
#   - C++ dependencies from Debian's packages (apt-get; sudo when not root)
#   - a Python virtual environment .venv with Triton (python/requirements.txt; no GPU needed)
#   - with --tests (scripts/test.sh), also torch in .venv (python/requirements-test.txt), for
#     the checks that run kernels under Triton's CPU interpreter: about 3.7 GB to download; and
#     Debian's chromium (when apt-get is there), for the headless checks of the HTML reports
#   - build/tritonforge and the tests, with CMake
set -euo pipefail
cd "$(dirname "$0")/.."

REQS=python/requirements.txt
CHECK="import triton, numpy, pytest"
if [ "${1:-}" = "--tests" ]; then
  REQS=python/requirements-test.txt
  CHECK="$CHECK, torch; assert torch.ones(2).sum().item() == 2"
elif [ -n "${1:-}" ]; then
  echo "setup: unknown option '$1' (the only one is --tests)" >&2
  exit 2
fi

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

# With --tests: a headless browser for the check that report.html and results.html load without
# a console error (tests/python/test_html_report.py; skipped, and says so, without one).
if [ "$REQS" = python/requirements-test.txt ] && command -v apt-get >/dev/null 2>&1 \
    && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  echo "setup: installing chromium (headless checks of the HTML reports)"
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium \
    || echo "setup: chromium could not be installed; the browser checks of the HTML reports will be skipped"
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
# Python packages are installed again when an import fails or when the requirement files
# differ from those of the last install (the stamp), so that a changed pin reaches an
# existing .venv; otherwise this step asks no registry.
wanted_requirements() { cat python/requirements.txt; [ "$REQS" = python/requirements.txt ] || cat "$REQS"; }
stamp=".venv/.tritonforge-$(basename "$REQS")"
if ! .venv/bin/python -c "$CHECK" >/dev/null 2>&1 || ! wanted_requirements | cmp -s - "$stamp"; then
  echo "setup: installing Python packages into .venv ($REQS)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r "$REQS"
  .venv/bin/python -c "$CHECK"
  wanted_requirements > "$stamp"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"

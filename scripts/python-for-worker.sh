#!/usr/bin/env bash
# Prints the interpreter the worker should use: the machine's python3 when it has torch
# with a CUDA GPU (a GPU machine), else the project's .venv (analysis and compiles only).
cd "$(dirname "$0")/.."
if [ -n "${TRITONFORGE_PYTHON:-}" ]; then echo "$TRITONFORGE_PYTHON"; exit 0; fi
if python3 -c "import torch, triton, sys; sys.exit(0 if torch.cuda.is_available() else 1)" >/dev/null 2>&1; then
  command -v python3
else
  echo "$PWD/.venv/bin/python"
fi

#!/usr/bin/env bash
# Installs PyTorch (CPU use only) from plain PyPI into a private virtualenv for
# the attention comparison (bench/attention/compare_sdpa.py). Large download
# (the Linux x86-64 wheel pulls CUDA runtime wheels too); for benchmarks only,
# never for CI.
set -euo pipefail
VENV="${OPSNN_BENCH_VENV:-${HOME}/.cache/opsnn-bench-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -c "import torch" 2>/dev/null || "$VENV/bin/pip" install --quiet torch numpy
"$VENV/bin/python" -c "import torch; print('torch', torch.__version__, 'threads', torch.get_num_threads())"
echo "$VENV"

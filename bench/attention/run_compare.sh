#!/usr/bin/env bash
# Fused attention against PyTorch SDPA, 2 threads.
#   bench/attention/run_compare.sh [build-dir] [dtype list, e.g. f32,bf16]
# With the Python package built (build-dir/python, -DOPSNN_BUILD_PYTHON=ON):
# ours and PyTorch side by side in one process, rotated rounds
# (compare_sdpa.py), then our benchmark for the fraction of the FMA peak and
# the unfused path. Without it: PyTorch first, then ours, its ratios read
# from the two runs.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD="${1:-build}"
DTYPES="${2:-f32}"
THREADS="${OPSNN_NUM_THREADS:-2}"
VENV="$("$HERE/setup_torch.sh" | tail -1)"
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
TORCH_ARG=()
if [ -f "$BUILD/python/ops_nn/__init__.py" ]; then
  PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" OPSNN_NUM_THREADS="$THREADS" \
    "$VENV/bin/python" "$HERE/compare_sdpa.py" "$THREADS" "$DTYPES"
else
  echo "# $BUILD/python has no ops_nn: PyTorch and ours timed one after the other"
  "$VENV/bin/python" "$HERE/compare_sdpa.py" "$THREADS" "$DTYPES" | tee "$OUT"
  TORCH_ARG=(--torch "$OUT")
fi
for dt in ${DTYPES//,/ }; do
  OPSNN_NUM_THREADS="$THREADS" "$BUILD/bench/opsnn_bench_sdpa" "${TORCH_ARG[@]}" --dtype "$dt"
done

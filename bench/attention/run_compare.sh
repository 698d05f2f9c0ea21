#!/usr/bin/env bash
# Fused attention vs our unfused path vs PyTorch SDPA, in one run, 2 threads.
#   bench/attention/run_compare.sh [build-dir] [dtype list, e.g. f32,bf16]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD="${1:-build}"
DTYPES="${2:-f32}"
THREADS="${OPSNN_NUM_THREADS:-2}"
VENV="$("$HERE/setup_torch.sh" | tail -1)"
OUT="$(mktemp)"
"$VENV/bin/python" "$HERE/compare_sdpa.py" "$THREADS" "$DTYPES" | tee "$OUT"
for dt in ${DTYPES//,/ }; do
  OPSNN_NUM_THREADS="$THREADS" "$BUILD/bench/opsnn_bench_sdpa" --torch "$OUT" --dtype "$dt"
done
rm -f "$OUT"

#!/usr/bin/env bash
# The GEMM, attention and element-wise benches of two builds, run
# alternately on the same machine (a change's "no bench got slower"):
#   bench/compare_builds.sh BASE_BUILD NEW_BUILD [OUT_DIR]
# Each build: Release with -DOPSNN_BUILD_PEER_BENCH=ON (for example a
# worktree of the base commit next to this one). Writes the raw outputs to
# OUT_DIR (default compare-out/) and prints the GEMM rows side by side.
set -euo pipefail
base=$1 new=$2 out=${3:-compare-out}
mkdir -p "$out"
export OPSNN_NUM_THREADS=${OPSNN_NUM_THREADS:-2}
here=$(cd "$(dirname "$0")" && pwd)
for r in 1 2; do
  for w in base new; do
    d=$base; [ "$w" = new ] && d=$new
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$d/bench/opsnn_bench_matmul_peers" 5 \
      > "$out/gemm_${w}_$r.txt" 2>&1
    for dt in f32 bf16; do
      "$d/bench/opsnn_bench_sdpa" --threads "$OPSNN_NUM_THREADS" --dtype "$dt" --unfused 0 \
        > "$out/sdpa_${w}_${dt}_$r.txt" 2>&1
    done
    echo "round $r $w done $(date +%T)"
  done
done
python3 "$here/unary_cost_report.py" --rounds 3 --ops add,gelu,silu,softmax,layer_norm,rms_norm \
  "$base/tools/opsnn/opsnn" "$new/tools/opsnn/opsnn" > "$out/unary.txt" 2>&1
python3 - "$out" <<'PY'
import glob, math, sys
out = sys.argv[1]
def rows(f):
    d = {}
    for l in open(f):
        p = l.split()
        if len(p) > 4 and p[0] in ("f32", "bf16") and p[2] == "opsnn":
            d[(p[0], p[1])] = float(p[3])
    return d
b = [rows(f) for f in sorted(glob.glob(out + "/gemm_base_*.txt"))]
n = [rows(f) for f in sorted(glob.glob(out + "/gemm_new_*.txt"))]
print("%-6s %-16s %9s %9s %8s" % ("dtype", "shape", "base_min", "new_min", "new/base"))
for k in b[0]:
    bm, nm = min(x[k] for x in b), min(x[k] for x in n)
    print("%-6s %-16s %9.3f %9.3f %8.3f" % (k[0], k[1], bm, nm, nm / bm))
PY
echo "attention: $out/sdpa_*.txt; element-wise: $out/unary.txt"

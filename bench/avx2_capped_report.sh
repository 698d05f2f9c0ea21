#!/usr/bin/env bash
# The AVX2 path against its peers, every side capped at AVX2, in one sitting:
# what an AVX2-only CPU (AMD Zen 2/3, most client Intel parts) would see.
#   bench/avx2_capped_report.sh [build-dir] [rounds]
# The build needs the peer benches: cmake -DOPSNN_BUILD_PEER_BENCH=ON (after
# bench/setup_peers.sh). Run it on a quiet machine: every figure is a ratio
# measured side by side, but a compile on the other core still moves them.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD="${1:-build/release}"
ROUNDS="${2:-7}"

# The caps: ours, oneDNN 2.x and 3.x, OpenBLAS, PyTorch (ATen's kernels, and
# the MKL and oneDNN 3.x inside it: on an Intel CPU MKL would otherwise run
# its AVX-512 GEMMs under PyTorch's attention).
export OPSNN_ISA=avx2 DNNL_MAX_CPU_ISA=AVX2 ONEDNN_MAX_CPU_ISA=AVX2
export OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2
export OPSNN_NUM_THREADS=2 OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2
# An AVX2-only CPU has none of these either (AVX-VNNI came with Alder Lake):
# without this the int8 rows would time our AVX-VNNI kernel against oneDNN's
# plain AVX2 one.
export OPSNN_CPU_DISABLE=avx_vnni,avx512_vnni,avx512_bf16

echo "== $(date -u '+%F %T') UTC, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "== GEMM f32, weights pre-packed, vs oneDNN and OpenBLAS"
"$BUILD/bench/opsnn_bench_matmul_peers" "$ROUNDS" all f32
echo "== op form on unpacked weights vs packed (decode, compute-bound, large M); bf16 vs f32"
"$BUILD/bench/opsnn_bench_matmul_op_form" "$ROUNDS" all
echo "== matmul_int8 W8A8 vs oneDNN's int8 matmul"
"$BUILD/bench/opsnn_bench_quant_peers" 20 2 int8
echo "== resize and pooling vs oneDNN's resampling and pooling"
"$BUILD/bench/opsnn_bench_resize_pool_peers" "$ROUNDS"
echo "== sdpa vs PyTorch's scaled_dot_product_attention"
"$HERE/attention/run_compare.sh" "$BUILD" f32
echo "== element-wise and row ops, 64 MiB f32, 1 thread, fraction of copy bandwidth"
python3 "$HERE/unary_cost_report.py" --rounds 3 --isas avx2 \
  --ops add,gelu,silu,softmax,layer_norm,rms_norm "$BUILD/tools/opsnn/opsnn"

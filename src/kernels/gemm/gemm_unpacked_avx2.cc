#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm_unpacked.h"
#include "kernels/simd/vec_avx2.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
// 16 ymm. Row-major B: 4x3 accumulators (+3 B vectors, 1 broadcast), 1x4 for
// M = 1; 4x3 loads 7 vectors per 12 FMAs where 2x4 loaded 6 per 8, and M = 8
// ran 1.3-1.5x faster (docs/notes/2026-12-04-unpacked-avx2-tiles.md).
// Transposed B: 4x3 (M = 8 1.1-1.2x faster than 2x4), 1x8.
inline constexpr int kRmG = 4, kRmNv = 3, kRmNv1 = 4, kDotG = 4, kDotR = 3, kDotR1 = 8;
// bf16 weight rows in pairs (dot_span's Pairs): one load and two unpacks
// per 16 weights instead of two widening loads and two shifts. Slower at
// first (8x4096x4096 0.80-0.83 -> 0.68-0.71 of packed) while the pair
// load's zero vector was hoisted into a register and spilled an
// accumulator; with the zero made in place, on Zen 3 (two builds' processes
// alternated): linear bf16 8x11008x4096 10.1-11.3 -> 7.4-9.5 ms, 1x4096x4096
// 1.59-1.74 -> 1.23-1.53, 3 and 16 rows in cache 8-17% faster, 8x4096x4096
// the same.
inline constexpr bool kDotPairs = true;
#include "kernels/gemm/gemm_unpacked_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::gemm {
UnpackedKernel unpacked_avx2() {
  using namespace simd::avx2;
  return {&detail::run_unpacked, kDotPairs ? kLanes : 0};
}
}  // namespace opsnn::gemm

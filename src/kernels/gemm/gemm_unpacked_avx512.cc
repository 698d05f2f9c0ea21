#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm_unpacked.h"
#include "kernels/simd/vec_avx512.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
// 32 zmm: 4x4 / 1x8 accumulators for row-major B, 4x6 / 1x8 for transposed
// B. At M = 8 the 4-row tiles (each B vector read twice, from L1 the second
// time) ran 0.95-1.05 of the packed time where 8x2 and 4x4 ran 0.77-0.94
// (docs/notes/2026-12-04-unpacked-avx2-tiles.md). Since the sub-blocks keep
// their strips in L1 (rm_sub), row-major 4x4 (4 lines of a B row per tile,
// two bf16 pairs) beats 4x6, 4x5 and 4x3 at M = 8: op / packed f32
// 8x4096x4096 0.85-0.86 -> 0.93-0.98, 8x11008x4096 0.78-0.79 -> 0.80-0.82,
// bf16 8x4096x4096 0.75-0.81 -> 0.87-1.04 (two A/B runs each).
inline constexpr int kRmG = 4, kRmNv = 4, kRmNv1 = 8, kDotG = 4, kDotR = 6, kDotR1 = 8;
// bf16 weight rows in pairs (dot_span's Pairs): one vpunpck per vector on
// p5 instead of vpmovzxwd (p5) + vpslld (p0), both FMA ports here; bf16
// linear at M = 8 0.80-0.85 -> 0.86-0.92 of packed. run_unpacked lays A out
// in pair order for this ISA only.
inline constexpr bool kDotPairs = true;
#include "kernels/gemm/gemm_unpacked_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::gemm {
UnpackedKernel unpacked_avx512() {
  using namespace simd::avx512;
  return {&detail::run_unpacked, kDotPairs ? kLanes : 0};
}
}  // namespace opsnn::gemm

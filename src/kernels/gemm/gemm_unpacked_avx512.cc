#include <algorithm>
#include <array>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm_unpacked.h"
#include "kernels/simd/vec_avx512.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
// 32 zmm: 8x2 / 1x8 accumulators for row-major B (each B vector converted
// once for 8 rows), 4x4 / 1x8 for transposed B.
inline constexpr int kRmG = 8, kRmNv = 2, kRmNv1 = 8, kDotG = 4, kDotR = 4, kDotR1 = 8;
#include "kernels/gemm/gemm_unpacked_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::gemm {
UnpackedFn unpacked_avx512() { return &simd::avx512::detail::run_unpacked; }
}  // namespace opsnn::gemm

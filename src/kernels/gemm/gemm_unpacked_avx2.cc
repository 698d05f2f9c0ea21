#include <algorithm>
#include <array>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm_unpacked.h"
#include "kernels/simd/vec_avx2.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
// 16 ymm: 2x4 / 1x4 accumulators (+4 B vectors) for row-major B, 2x4 / 1x8 for transposed B.
inline constexpr int kRmG = 2, kRmNv = 4, kRmNv1 = 4, kDotG = 2, kDotR = 4, kDotR1 = 8;
#include "kernels/gemm/gemm_unpacked_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::gemm {
UnpackedFn unpacked_avx2() { return &simd::avx2::detail::run_unpacked; }
}  // namespace opsnn::gemm

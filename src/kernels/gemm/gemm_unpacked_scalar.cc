#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm_unpacked.h"
#include "kernels/simd/vec_scalar.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
// One lane: the vector code's blocking, tested as on the SIMD paths.
inline constexpr int kRmG = 4, kRmNv = 4, kRmNv1 = 8, kDotG = 4, kDotR = 4, kDotR1 = 8;
inline constexpr bool kDotPairs = false;
#include "kernels/gemm/gemm_unpacked_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::gemm {
UnpackedKernel unpacked_scalar() {
  using namespace simd::scalar;
  return {&detail::run_unpacked, kDotPairs ? kLanes : 0};
}
}  // namespace opsnn::gemm

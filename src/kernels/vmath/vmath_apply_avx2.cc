#include "kernels/simd/vec_avx2.h"
#include "kernels/vmath/vmath.h"

namespace opsnn::simd::avx2 {
#include "kernels/vmath/vmath_apply_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::vmath::detail {
void apply_avx2(Fn f, const float* x, float* y, int64_t n) { simd::avx2::vmath_apply(f, x, y, n); }
}  // namespace opsnn::vmath::detail

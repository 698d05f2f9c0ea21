#include "kernels/simd/vec_avx512.h"
#include "kernels/vmath/vmath.h"

namespace opsnn::simd::avx512 {
#include "kernels/vmath/vmath_apply_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::vmath::detail {
void apply_avx512(Fn f, const float* x, float* y, int64_t n) {
  simd::avx512::vmath_apply(f, x, y, n);
}
}  // namespace opsnn::vmath::detail

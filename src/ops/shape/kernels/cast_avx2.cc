#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/simd/vec_avx2.h"
#include "ops/shape/cast.h"

namespace opsnn::simd::avx2 {
#include "ops/shape/kernels/cast_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::cast {
ConvFn table_avx2(DType from, DType to) { return simd::avx2::castk::table(from, to); }
}  // namespace opsnn::cast

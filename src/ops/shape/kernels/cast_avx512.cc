#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/simd/vec_avx512.h"
#include "ops/shape/cast.h"

namespace opsnn::simd::avx512 {
#include "ops/shape/kernels/cast_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::cast {
ConvFn table_avx512(DType from, DType to) { return simd::avx512::castk::table(from, to); }
}  // namespace opsnn::cast

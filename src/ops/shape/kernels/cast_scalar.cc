#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/simd/vec_scalar.h"
#include "ops/shape/cast.h"

namespace opsnn::simd::scalar {
#include "ops/shape/kernels/cast_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::cast {
ConvFn table_scalar(DType from, DType to) { return simd::scalar::castk::table(from, to); }
}  // namespace opsnn::cast

#include "core/convert.h"
#include "kernels/simd/vec_scalar.h"

namespace opsnn::simd::scalar {
using detail::ConvertFns;
#include "kernels/convert/convert_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::detail {
const ConvertFns& convert_fns_scalar() { return simd::scalar::kConvertFns; }
}  // namespace opsnn::detail

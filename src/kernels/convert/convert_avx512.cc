#include "core/convert.h"
#include "kernels/simd/vec_avx512.h"

namespace opsnn::simd::avx512 {
using detail::ConvertFns;
#include "kernels/convert/convert_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::detail {
const ConvertFns& convert_fns_avx512() { return simd::avx512::kConvertFns; }
}  // namespace opsnn::detail

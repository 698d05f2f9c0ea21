#include "core/convert.h"
#include "kernels/simd/vec_avx2.h"

namespace opsnn::simd::avx2 {
using detail::ConvertFns;
#include "kernels/convert/convert_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::detail {
const ConvertFns& convert_fns_avx2() { return simd::avx2::kConvertFns; }
}  // namespace opsnn::detail

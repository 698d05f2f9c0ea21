#include <emmintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/gemm/gemm.h"
#include "kernels/qgemm/qvec_scalar.h"
#include "ops/quant/quant.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
#include "ops/quant/kernels/quant_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::quant {
const Fns& fns_scalar() {
  static const Fns f = {&simd::scalar::quantize, &simd::scalar::dequantize,
                        &simd::scalar::quantize_dynamic, &simd::scalar::matmul_wq};
  return f;
}
}  // namespace opsnn::quant

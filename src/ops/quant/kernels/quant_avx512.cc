#include <emmintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/gemm/gemm.h"
#include "kernels/qgemm/qvec_avx512.h"
#include "ops/quant/quant.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "ops/quant/kernels/quant_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::quant {
const Fns& fns_avx512() {
  static const Fns f = {&simd::avx512::quantize, &simd::avx512::dequantize,
                        &simd::avx512::quantize_dynamic, &simd::avx512::matmul_wq};
  return f;
}
}  // namespace opsnn::quant

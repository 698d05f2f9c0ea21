#include <emmintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/gemm/gemm.h"
#include "kernels/qgemm/qvec_avx2.h"
#include "ops/quant/quant.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "ops/quant/kernels/quant_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::quant {
const Fns& fns_avx2() {
  static const Fns f = {&simd::avx2::quantize, &simd::avx2::dequantize,
                        &simd::avx2::quantize_dynamic, &simd::avx2::matmul_wq};
  return f;
}
}  // namespace opsnn::quant

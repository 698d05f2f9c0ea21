#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/simd/vec_avx512.h"
#include "ops/softmax/softmax.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
inline void store_fence() { _mm_sfence(); }  // orders non-temporal stores
#include "ops/softmax/kernels/softmax_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::softmax {
RunFn run_avx512() { return &simd::avx512::softmax_k::run; }
}  // namespace opsnn::softmax

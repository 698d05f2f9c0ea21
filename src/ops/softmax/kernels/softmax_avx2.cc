#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/simd/vec_avx2.h"
#include "ops/softmax/softmax.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
inline void store_fence() { _mm_sfence(); }  // orders non-temporal stores
#include "ops/softmax/kernels/softmax_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::softmax {
RunFn run_avx2() { return &simd::avx2::softmax_k::run; }
}  // namespace opsnn::softmax

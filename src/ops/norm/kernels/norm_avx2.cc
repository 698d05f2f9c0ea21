#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/act/act.h"
#include "kernels/simd/vec_avx2.h"
#include "ops/norm/norm.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
inline void store_fence() { _mm_sfence(); }  // orders non-temporal stores
#include "ops/norm/kernels/norm_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::norm {
Fns fns_avx2() { return {&simd::avx2::norm_k::run_rows, &simd::avx2::norm_k::run_channels}; }
}  // namespace opsnn::norm

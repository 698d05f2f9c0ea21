#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/act/act.h"
#include "kernels/simd/vec_avx512.h"
#include "ops/norm/norm.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
inline void store_fence() { _mm_sfence(); }  // orders non-temporal stores
#include "ops/norm/kernels/norm_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::norm {
Fns fns_avx512() { return {&simd::avx512::norm_k::run_rows, &simd::avx512::norm_k::run_channels}; }
}  // namespace opsnn::norm

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_avx512.h"
#include "ops/conv/pool.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "ops/conv/kernels/pool_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::conv {
PoolFn pool_fn_avx512() { return &simd::avx512::pool_k::run; }
}  // namespace opsnn::conv

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_avx2.h"
#include "ops/conv/pool.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "ops/conv/kernels/pool_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::conv {
PoolFn pool_fn_avx2() { return &simd::avx2::pool_k::run; }
}  // namespace opsnn::conv

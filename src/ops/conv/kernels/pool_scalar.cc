#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_scalar.h"
#include "ops/conv/pool.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
#include "ops/conv/kernels/pool_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::conv {
PoolFn pool_fn_scalar() { return &simd::scalar::pool_k::run; }
}  // namespace opsnn::conv

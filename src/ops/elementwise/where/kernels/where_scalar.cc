#include <algorithm>
#include <cstdint>

#include "kernels/simd/vec_scalar.h"
#include "ops/elementwise/where/where.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
#include "ops/elementwise/where/kernels/where_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::where {
RunFn run_scalar() { return &simd::scalar::run; }
}  // namespace opsnn::where

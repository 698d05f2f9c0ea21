#include <algorithm>
#include <cstdint>

#include "kernels/simd/vec_avx2.h"
#include "ops/elementwise/where/where.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "ops/elementwise/where/kernels/where_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::where {
RunFn run_avx2() { return &simd::avx2::run; }
}  // namespace opsnn::where

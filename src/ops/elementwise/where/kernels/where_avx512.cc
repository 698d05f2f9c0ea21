#include <algorithm>
#include <cstdint>

#include "kernels/simd/vec_avx512.h"
#include "ops/elementwise/where/where.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "ops/elementwise/where/kernels/where_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::where {
RunFn run_avx512() { return &simd::avx512::run; }
}  // namespace opsnn::where

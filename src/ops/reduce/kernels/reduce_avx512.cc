#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/simd/vec_avx512.h"
#include "ops/reduce/reduce.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "ops/reduce/kernels/reduce_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::reduce {
RunFn run_avx512() { return &simd::avx512::run; }
ArgmaxFn argmax_avx512() { return &simd::avx512::argmax; }
}  // namespace opsnn::reduce

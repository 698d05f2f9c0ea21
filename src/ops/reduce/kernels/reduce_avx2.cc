#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/simd/vec_avx2.h"
#include "ops/reduce/reduce.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "ops/reduce/kernels/reduce_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::reduce {
RunFn run_avx2() { return &simd::avx2::run; }
ArgmaxFn argmax_avx2() { return &simd::avx2::argmax; }
}  // namespace opsnn::reduce

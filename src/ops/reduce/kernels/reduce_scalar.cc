#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/simd/vec_scalar.h"
#include "ops/reduce/reduce.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
#include "ops/reduce/kernels/reduce_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::reduce {
RunFn run_scalar() { return &simd::scalar::run; }
ArgmaxFn argmax_scalar() { return &simd::scalar::argmax; }
}  // namespace opsnn::reduce

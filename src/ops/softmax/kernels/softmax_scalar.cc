#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/simd/vec_scalar.h"
#include "ops/softmax/softmax.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
inline void store_fence() {}
#include "ops/softmax/kernels/softmax_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::softmax {
RunFn run_scalar() { return &simd::scalar::softmax_k::run; }
}  // namespace opsnn::softmax

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/act/act.h"
#include "kernels/simd/vec_scalar.h"
#include "ops/norm/norm.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
inline void store_fence() {}
#include "ops/norm/kernels/norm_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::norm {
Fns fns_scalar() { return {&simd::scalar::norm_k::run_rows, &simd::scalar::norm_k::run_channels}; }
}  // namespace opsnn::norm

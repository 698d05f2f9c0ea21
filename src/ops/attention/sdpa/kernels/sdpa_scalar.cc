#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/simd/vec_scalar.h"
#include "ops/attention/sdpa/sdpa.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
#include "ops/attention/sdpa/kernels/sdpa_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::sdpa {
RunFn run_scalar() { return &simd::scalar::sdpa_impl::run; }
}  // namespace opsnn::sdpa

#include <algorithm>
#include <cstdint>

#include "kernels/act/act.h"
#include "kernels/simd/vec_scalar.h"
#include "ops/activation/gated/gated.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
#include "ops/activation/gated/kernels/gated_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::gated {
RunFn run_scalar() { return &simd::scalar::run; }
}  // namespace opsnn::gated

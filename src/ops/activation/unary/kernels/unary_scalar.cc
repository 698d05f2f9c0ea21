#include <type_traits>

#include "kernels/act/act.h"
#include "kernels/simd/vec_scalar.h"
#include "ops/activation/unary/unary.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
#include "ops/activation/unary/kernels/unary_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::unary {
RunFn run_scalar() { return &simd::scalar::run; }
}  // namespace opsnn::unary

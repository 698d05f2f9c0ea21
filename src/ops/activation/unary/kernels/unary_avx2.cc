#include <type_traits>

#include "kernels/act/act.h"
#include "kernels/simd/vec_avx2.h"
#include "ops/activation/unary/unary.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "ops/activation/unary/kernels/unary_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::unary {
RunFn run_avx2() { return &simd::avx2::run; }
}  // namespace opsnn::unary

#include <type_traits>

#include "kernels/act/act.h"
#include "kernels/simd/vec_avx512.h"
#include "ops/activation/unary/unary.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "ops/activation/unary/kernels/unary_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::unary {
RunFn run_avx512() { return &simd::avx512::run; }
}  // namespace opsnn::unary

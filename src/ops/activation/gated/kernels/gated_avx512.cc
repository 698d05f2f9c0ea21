#include <algorithm>
#include <cstdint>

#include "kernels/act/act.h"
#include "kernels/simd/vec_avx512.h"
#include "ops/activation/gated/gated.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "ops/activation/gated/kernels/gated_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::gated {
RunFn run_avx512() { return &simd::avx512::run; }
}  // namespace opsnn::gated

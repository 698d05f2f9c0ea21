#include <algorithm>
#include <cstdint>

#include "kernels/act/act.h"
#include "kernels/simd/vec_avx2.h"
#include "ops/activation/gated/gated.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "ops/activation/gated/kernels/gated_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::gated {
RunFn run_avx2() { return &simd::avx2::run; }
}  // namespace opsnn::gated

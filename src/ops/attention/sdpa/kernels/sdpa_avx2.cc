#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/simd/vec_avx2.h"
#include "ops/attention/sdpa/sdpa.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "ops/attention/sdpa/kernels/sdpa_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::sdpa {
RunFn run_avx2() { return &simd::avx2::sdpa_impl::run; }
}  // namespace opsnn::sdpa

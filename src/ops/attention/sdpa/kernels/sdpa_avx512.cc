#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/simd/vec_avx512.h"
#include "ops/attention/sdpa/sdpa.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#define SDPA_HSUM16 1
#include "ops/attention/sdpa/kernels/sdpa_impl.h"
#undef SDPA_HSUM16
}  // namespace opsnn::simd::avx512

namespace opsnn::sdpa {
RunFn run_avx512() { return &simd::avx512::sdpa_impl::run; }
}  // namespace opsnn::sdpa

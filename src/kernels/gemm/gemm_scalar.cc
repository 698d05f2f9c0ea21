#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm.h"
#include "kernels/simd/vec_scalar.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
// Portable 4x8 (the compiler may vectorise it with the baseline SSE2).
#define KERNEL_LIST(X) X(4, 8)
#include "kernels/gemm/gemm_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::gemm {
const IsaFns& fns_scalar() {
  using namespace simd::scalar::detail;
  static const char* const names[] = {"4x8"};
  static const IsaFns f = {1,
                           names,
                           kMr,
                           kNr,
                           &simd::scalar::detail::pack_b_entry,
                           &simd::scalar::detail::run,
                           &simd::scalar::detail::run_raw_entry};
  return f;
}
}  // namespace opsnn::gemm

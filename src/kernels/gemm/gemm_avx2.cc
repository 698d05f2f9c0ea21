#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm.h"
#include "kernels/simd/vec_avx2.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
// 6x16: 12 ymm accumulators, 2 B vectors, broadcast A.
#define KERNEL_LIST(X) X(6, 2) X(4, 3)
#include "kernels/gemm/gemm_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::gemm {
const IsaFns& fns_avx2() {
  using namespace simd::avx2::detail;
  static const char* const names[] = {"6x16", "4x24"};
  static const IsaFns f = {2,
                           names,
                           kMr,
                           kNr,
                           &simd::avx2::detail::pack_b_entry,
                           &simd::avx2::detail::run,
                           &simd::avx2::detail::run_raw_entry};
  return f;
}
}  // namespace opsnn::gemm

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm.h"
#include "kernels/simd/vec_avx512.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
// 14x32: 28 zmm accumulators, 2 B vectors, broadcast A. 6x64: 24 + 4.
#define KERNEL_LIST(X) X(14, 2) X(6, 4) X(8, 3)
#include "kernels/gemm/gemm_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::gemm {
const IsaFns& fns_avx512() {
  using namespace simd::avx512::detail;
  static const char* const names[] = {"14x32", "6x64", "8x48"};
  static const IsaFns f = {3,
                           names,
                           kMr,
                           kNr,
                           &simd::avx512::detail::pack_b_entry,
                           &simd::avx512::detail::run,
                           &simd::avx512::detail::run_raw_entry};
  return f;
}
}  // namespace opsnn::gemm

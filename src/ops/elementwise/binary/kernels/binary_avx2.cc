#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_avx2.h"
#include "ops/elementwise/binary/binary.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "ops/elementwise/binary/kernels/binary_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::binary {
RunFn run_avx2() { return &simd::avx2::run; }
}  // namespace opsnn::binary

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_avx512.h"
#include "ops/elementwise/binary/binary.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "ops/elementwise/binary/kernels/binary_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::binary {
RunFn run_avx512() { return &simd::avx512::run; }
}  // namespace opsnn::binary

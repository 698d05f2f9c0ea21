#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_scalar.h"
#include "ops/elementwise/binary/binary.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
#include "ops/elementwise/binary/kernels/binary_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::binary {
RunFn run_scalar() { return &simd::scalar::run; }
}  // namespace opsnn::binary

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_scalar.h"
#include "ops/conv/resize.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
#include "ops/conv/kernels/resize_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::conv {
ResizeFn resize_fn_scalar() { return &simd::scalar::resize_k::run; }
}  // namespace opsnn::conv

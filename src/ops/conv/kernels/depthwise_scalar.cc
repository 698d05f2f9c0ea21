#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/act/act.h"
#include "kernels/simd/vec_scalar.h"
#include "ops/conv/depthwise.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
#include "kernels/act/act_vec.inc"
#include "ops/conv/kernels/depthwise_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::conv {
DepthwiseFn depthwise_fn_scalar() { return &simd::scalar::dw_k::run; }
}  // namespace opsnn::conv

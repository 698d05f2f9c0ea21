#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/act/act.h"
#include "kernels/simd/vec_avx512.h"
#include "ops/conv/depthwise.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "kernels/act/act_vec.inc"
#include "ops/conv/kernels/depthwise_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::conv {
DepthwiseFn depthwise_fn_avx512() { return &simd::avx512::dw_k::run; }
}  // namespace opsnn::conv

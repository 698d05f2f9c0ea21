#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/act/act.h"
#include "kernels/simd/vec_avx2.h"
#include "ops/conv/depthwise.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "kernels/act/act_vec.inc"
#include "ops/conv/kernels/depthwise_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::conv {
DepthwiseFn depthwise_fn_avx2() { return &simd::avx2::dw_k::run; }
}  // namespace opsnn::conv

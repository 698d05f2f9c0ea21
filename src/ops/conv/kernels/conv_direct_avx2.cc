#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_avx2.h"
#include "ops/conv/conv_direct.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "ops/conv/kernels/conv_direct_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::conv {
DirectFn direct_fn_avx2() { return &simd::avx2::conv_direct_k::run; }
}  // namespace opsnn::conv

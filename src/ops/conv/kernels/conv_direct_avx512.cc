#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_avx512.h"
#include "ops/conv/conv_direct.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "ops/conv/kernels/conv_direct_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::conv {
DirectFn direct_fn_avx512() { return &simd::avx512::conv_direct_k::run; }
}  // namespace opsnn::conv

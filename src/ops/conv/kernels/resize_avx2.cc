#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_avx2.h"
#include "ops/conv/resize.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2 {
#include "ops/conv/kernels/resize_impl.h"
}  // namespace opsnn::simd::avx2

namespace opsnn::conv {
ResizeFn resize_fn_avx2() { return &simd::avx2::resize_k::run; }
}  // namespace opsnn::conv

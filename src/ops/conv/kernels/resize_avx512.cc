#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/simd/vec_avx512.h"
#include "ops/conv/resize.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "ops/conv/kernels/resize_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::conv {
ResizeFn resize_fn_avx512() { return &simd::avx512::resize_k::run; }
}  // namespace opsnn::conv

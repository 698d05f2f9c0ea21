#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/simd/vec_avx512.h"
#include "ops/index/index.h"
#include "ops/index/order.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
#include "ops/index/kernels/index_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::index {
Kernels kernels_avx512() { return simd::avx512::indexk::kernels(); }
}  // namespace opsnn::index

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/simd/vec_avx512.h"
#include "ops/index/index.h"
#include "ops/index/order.h"
#include "ops/shape/kernels/copy.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
// f32 transpose tile of this ISA (nullptr: a plain loop).
inline shape::TileFn transpose_f32_tile() { return shape::tiles_avx512().tile4; }
#include "ops/index/kernels/index_impl.h"
}  // namespace opsnn::simd::avx512

namespace opsnn::index {
Kernels kernels_avx512() { return simd::avx512::indexk::kernels(); }
}  // namespace opsnn::index

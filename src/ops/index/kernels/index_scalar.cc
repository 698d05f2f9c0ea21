#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/simd/vec_scalar.h"
#include "ops/index/index.h"
#include "ops/index/order.h"
#include "ops/shape/kernels/copy.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar {
// f32 transpose tile of this ISA (nullptr: a plain loop).
inline shape::TileFn transpose_f32_tile() { return nullptr; }
#include "ops/index/kernels/index_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::index {
Kernels kernels_scalar() { return simd::scalar::indexk::kernels(); }
}  // namespace opsnn::index

// Binary element-wise ops with NumPy broadcasting: one kernel template,
// instantiated per ISA.
#pragma once

#include <cstdint>

#include "ops/elementwise/broadcast.h"
#include "opsnn/dtype.h"

namespace opsnn::binary {

enum class Kind : int { add, sub, mul, div, pow, maximum, minimum };

// y = a (op) b over the broadcast plan (contiguous a, b, y of dtype t), threaded.
// Large f32 outputs are written with non-temporal stores.
using RunFn = void (*)(Kind kind, DType t, const ops::BroadcastPlan& plan, const void* a,
                       const void* b, void* y);

RunFn run_scalar();
RunFn run_avx2();
RunFn run_avx512();

}  // namespace opsnn::binary

// where(cond, a, b) with NumPy broadcasting of all three inputs: one kernel
// template, instantiated per ISA.
#pragma once

#include <cstdint>

#include "ops/elementwise/broadcast.h"
#include "opsnn/dtype.h"

namespace opsnn::where {

// y = cond != 0 ? a : b over the broadcast plan (inputs cond, a, b in that
// order); cond is 1 byte per element (bool or u8), a, b, y of dtype t.
using RunFn = void (*)(DType t, const ops::BroadcastPlan& plan, const uint8_t* cond, const void* a,
                       const void* b, void* y);

RunFn run_scalar();
RunFn run_avx2();
RunFn run_avx512();

}  // namespace opsnn::where

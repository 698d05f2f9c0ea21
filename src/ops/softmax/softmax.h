// softmax / log_softmax: one kernel template, instantiated per ISA.
#pragma once

#include <cstdint>

#include "opsnn/dtype.h"

namespace opsnn::softmax {

// x and y are contiguous [outer, n, inner] of dtype t (f32, bf16 or f16);
// the op normalises over n. inner == 1 is the last-axis fast path. Threaded;
// every row (or column block) is computed the same way for any thread count.
using RunFn = void (*)(DType t, const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
                       bool log);

RunFn run_scalar();
RunFn run_avx2();
RunFn run_avx512();

}  // namespace opsnn::softmax

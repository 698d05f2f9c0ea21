// Gated activations (swiglu, geglu): x [..., 2H] -> y [..., H], one kernel
// template instantiated per ISA.
#pragma once

#include <cstdint>

#include "opsnn/dtype.h"

namespace opsnn::gated {

enum class Kind : int { swiglu, geglu_erf, geglu_tanh };

// Contiguous x [rows, 2h] -> y [rows, h]: y = act(gate) * value, where gate is
// the first half of each row when gate_first, else the second; threaded.
using RunFn = void (*)(Kind kind, DType t, const void* x, void* y, int64_t rows, int64_t h,
                       bool gate_first);

RunFn run_scalar();
RunFn run_avx2();
RunFn run_avx512();

}  // namespace opsnn::gated

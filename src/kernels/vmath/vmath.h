// Array form of the shared vector math (src/kernels/simd/vmath_body.inc), one
// entry point per ISA. Used by tests/vmath_test.cc to measure the accuracy of
// exactly the code the kernels inline, and usable by any op that wants
// y[i] = f(x[i]) over a buffer without writing its own loop.
#pragma once

#include <cstdint>

#include "opsnn/cpu.h"

namespace opsnn::vmath {

// exp_nonpos is e^x for x <= 0 only (softmax and attention); its inputs above 0
// are outside its domain.
enum class Fn : int { exp, log, erf, tanh, sigmoid, erf_fast, exp_nonpos };
inline constexpr Fn kAllFns[] = {Fn::exp,     Fn::log,      Fn::erf,       Fn::tanh,
                                 Fn::sigmoid, Fn::erf_fast, Fn::exp_nonpos};
const char* fn_name(Fn f);

// y[i] = f(x[i]) for i < n, computed with the vector code of `isa` (full
// vectors plus one masked tail, as the element-wise kernels do).
using ArrayFn = void (*)(Fn f, const float* x, float* y, int64_t n);
// The entry point of one ISA (the caller makes sure the CPU has it).
ArrayFn array_fn(Isa isa);

namespace detail {
void apply_scalar(Fn f, const float* x, float* y, int64_t n);
void apply_avx2(Fn f, const float* x, float* y, int64_t n);
void apply_avx512(Fn f, const float* x, float* y, int64_t n);
}  // namespace detail

}  // namespace opsnn::vmath

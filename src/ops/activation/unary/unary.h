// Unary element-wise ops: one kernel template, instantiated per ISA.
#pragma once

#include <cstdint>

#include "opsnn/dtype.h"

namespace opsnn::unary {

enum class Kind : int {
  relu,
  leaky_relu,
  gelu_erf,
  gelu_tanh,
  quick_gelu,
  silu,
  sigmoid,
  tanh,
  exp,
  log,
  sqrt,
  rsqrt,
  reciprocal,
  neg,
  abs,
  erf,
  softplus,
  mish,
  hardswish,
  clip,
  floor,
  ceil,
  round,
  sign,
};

struct Params {
  float alpha = 0, beta = 0;  // leaky_relu slope; clip min/max
};

// Contiguous x -> y of n elements of dtype t (f32, bf16 or f16), threaded.
using RunFn = void (*)(Kind kind, DType t, const void* x, void* y, int64_t n, const Params& p);

RunFn run_scalar();
RunFn run_avx2();
RunFn run_avx512();

}  // namespace opsnn::unary

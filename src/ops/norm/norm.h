// Normalisation kernels (layer_norm, rms_norm, their fused residual-add forms,
// ada_layer_norm, group_norm, instance_norm, batch_norm, group_norm_silu):
// two kernel templates written once, instantiated per ISA.
#pragma once

#include <cstdint>

#include "opsnn/dtype.h"

namespace opsnn::norm {

// Row normalisation of contiguous x [rows, cols] (dtype t: f32, bf16, f16):
//   v   = x (+ residual)             sum_out = v when residual is given
//   y   = (v - mean) * rstd * gamma + beta    (layer: mean/var over the row)
//   y   = v * rrms * gamma + beta             (rms:   mean of squares)
// gamma/beta are f32 [param_blocks, cols]: row r uses block r / period (the
// caller passes ones/zeros when the op has no scale/bias).
struct RowArgs {
  DType t = DType::f32;
  const void* x = nullptr;
  const void* residual = nullptr;  // optional
  void* y = nullptr;
  void* sum_out = nullptr;  // with residual
  int64_t rows = 0, cols = 0;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  int64_t period = 1;  // rows per gamma/beta block (>= 1)
  float eps = 1e-5f;
  bool rms = false;
};
using RowFn = void (*)(const RowArgs& a);

// Channel normalisation of contiguous x [n, c, hw]:
//   stats = true  (group/instance norm): mean and rstd over each group of
//     c / groups channels x hw elements; y = (x - mean) * (rstd * gamma[ch]) + beta[ch]
//   stats = false (batch norm, inference): y = x * gamma[ch] + beta[ch], with
//     gamma/beta already folded from scale, bias, mean and var.
//   silu: y = y * sigmoid(y) afterwards.
struct ChannelArgs {
  DType t = DType::f32;
  const void* x = nullptr;
  void* y = nullptr;
  int64_t n = 0, c = 0, hw = 0, groups = 1;
  const float* gamma = nullptr;  // [c]
  const float* beta = nullptr;   // [c]
  const float* mean = nullptr;   // [c], without stats (batch_norm); nullptr: 0
  float eps = 1e-5f;
  bool stats = true;
  bool silu = false;
};
using ChannelFn = void (*)(const ChannelArgs& a);

struct Fns {
  RowFn rows;
  ChannelFn channels;
};
Fns fns_scalar();
Fns fns_avx2();
Fns fns_avx512();

}  // namespace opsnn::norm

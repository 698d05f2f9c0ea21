// Resize kernels: per spatial dim and output index, the input taps and their
// weights (nearest: 1, linear: 2, cubic: 4) are computed once at create; the
// kernels apply them separably-weighted (the product of the per-dim weights).
// Channels last vectorises over channels; channels first walks each plane.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/conv/row_cursor.h"
#include "opsnn/dtype.h"

namespace opsnn::conv {

struct ResizeDim {
  int64_t in = 1, out = 1, taps = 1;
  std::vector<int64_t> idx;      // out * taps input indices (clamped)
  std::vector<float> weight;     // out * taps
  std::vector<uint8_t> outside;  // tf_crop_and_resize: output uses the extrapolation value
  // The same taps tap-major (tap t of output o at t * out + o), int32: the
  // channels-first kernels' vector gathers along the row. Empty when in or
  // out do not fit int32.
  std::vector<int32_t> idx_tm;
  std::vector<float> weight_tm;
  // Output o is input o / 2 with weight 1 (nearest doubling, the UNet's
  // upsampling): the kernels widen whole vectors instead of gathering.
  bool doubles = false;
  // Two taps, out = 2 in, and every output but the first and the last mixing
  // inputs (i - 1, i) (output 2 i) or (i, i + 1) (output 2 i + 1) with one
  // pair of weights per parity (linear doubling): the kernels form whole
  // vectors of both parities from shifted loads instead of gathering.
  bool halves = false;
  float w_even[2] = {}, w_odd[2] = {};
};

struct ResizePlan {
  ResizeDim dim[3];
  bool cl = false;
  int64_t n = 0, c = 0;
  float extrapolation = 0;
  DType t = DType::f32;
};

using ResizeFn = void (*)(const ResizePlan& p, const void* x, void* y);
ResizeFn resize_fn_scalar();
ResizeFn resize_fn_avx2();
ResizeFn resize_fn_avx512();

}  // namespace opsnn::conv

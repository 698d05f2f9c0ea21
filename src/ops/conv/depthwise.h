// Depthwise convolution (group = input channels = output channels) with its
// own kernels: the implicit GEMM would run one K = taps, N = 1 product per
// channel. The taps' weights are packed once as f32 [taps][C rounded up to
// 16]. Channels last: vectors over channels, register tiles of output rows
// x pixels x channel vectors (kernels/depthwise_impl.h). Channels first
// with stride 1 along W: a kernel of its own over staged f32 rows, vectors
// along the row; other channels-first cases are transposed to channels last
// at the boundary. Padding taps add 0 * w as the reference does (NaN/inf
// weights stay visible at borders).
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/gemm/gemm.h"
#include "ops/conv/conv_engine.h"
#include "ops/conv/conv_geom.h"
#include "opsnn/op.h"

namespace opsnn::conv {

struct DepthwiseArgs {
  Window w;
  int64_t n = 0, c = 0;
  int64_t cp = 0;                  // C rounded up to 16 (the packed weight's row)
  DType t = DType::f32;            // x, y and residual
  const void* x = nullptr;         // [N, D, H, W, C]
  void* y = nullptr;               // [N, OD, OH, OW, C]
  const void* residual = nullptr;  // like y, or null
  const float* wt = nullptr;       // [taps][cp]
  const float* bias = nullptr;     // [cp] or null
  gemm::Act act = gemm::Act::none;
  bool cl = true;  // false: x, y, residual in NCHW (the channels-first kernel)
};

// Most input rows a kernel keeps pointers for: kd x (kh + 1) (two output
// rows per group).
inline constexpr int64_t kDwMaxRows = 64;

// The channels-first kernel (stride 1 along W) stages each input row once
// per plane, zero-padded and widened to f32, in a ring of rows on the task's
// stack of at most this many floats; larger rows take the transposes.
inline constexpr int64_t kDwStageFloats = 16384;
// Output rows per block of that kernel (at most; narrow rows take several
// so that a block has 8 vectors: 8 FMA chains), ring rows per kd, padded
// row length, and whether it takes the case.
inline int64_t dw_rows_per_block(const Window& w) {
  const int64_t nv = (w.out[2] + 15) / 16;  // 16-lane vectors per output row
  return nv >= 8 ? 1 : nv >= 4 ? 2 : nv >= 2 ? 4 : 8;
}
inline int64_t dw_ring_rows(const Window& w) {
  return (w.k[1] - 1) * w.d[1] + 1 + dw_rows_per_block(w) * w.s[1];
}
inline int64_t dw_row_floats(const Window& w) {
  const int64_t blk = 128;  // the widest output block (8 AVX-512 vectors)
  return (w.out[2] + blk - 1) / blk * blk + (w.k[2] - 1) * w.d[2] + 16;
}
inline bool dw_nchw_ok(const Window& w) {
  return w.s[2] == 1 && w.k[0] * dw_ring_rows(w) <= kDwMaxRows &&
         (w.k[0] * dw_ring_rows(w) + 1) * dw_row_floats(w) <= kDwStageFloats;
}

using DepthwiseFn = void (*)(const DepthwiseArgs& a);
DepthwiseFn depthwise_fn_scalar();
DepthwiseFn depthwise_fn_avx2();
DepthwiseFn depthwise_fn_avx512();

// True when the depthwise kernel takes the call: one input and one output
// channel per group, x, y and the residual in one dtype.
bool depthwise_ok(const OpCall& call, const ConvPlan& p);
std::unique_ptr<KernelInstance> make_depthwise_instance(const OpCall& call, const ConvPlan& p,
                                                        Isa isa);

}  // namespace opsnn::conv

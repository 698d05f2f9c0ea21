// Direct (register-blocked) f32 convolution for channels-last input on
// AVX-512 and AVX2: an output tile of TM pixels along a row x 2 vectors of
// output channels stays in registers (14 x 32 on AVX-512, 6 x 16 on AVX2)
// while the loop runs over the taps and input channels, broadcasting one
// input value per pixel and multiplying it by two packed weight vectors.
// The weights are the GEMM engine's packed B panels (pack_b, nr = 2
// vectors), packed once, rows in the kernel's walking order: input channels
// in sub-blocks of direct_sub_block(), and within one the taps, then its
// channels: k = (ic / sub, tap, ic % sub). The tile walks a sub-block over
// all taps before the next, so the input pixels it reads (16 x 3 rows x 256 B
// for a 3x3 kernel) stay in L1 while the weights stream past them. Padding
// taps read a zero row, so NaN/inf weights meet padding as 0 * w, as in the
// reference. Bias, activation and residual are applied to the tile in
// registers.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/gemm/gemm.h"
#include "ops/conv/conv_geom.h"

namespace opsnn::conv {

struct DirectArgs {
  Window w;
  int64_t n = 0, cin = 0, cout = 0, groups = 1, cin_g = 0, cout_g = 0;
  const float* x = nullptr;         // [N, D, H, W, Cin]
  const float* packed = nullptr;    // per group: ceil(cout_g / nr) panels of (taps * cin_g) x nr
  int64_t sub = 0;                  // input channels per sub-block (direct_sub_block)
  int64_t group_stride = 0;         // floats between groups' packed weights
  const float* zeros = nullptr;     // kw * cin_g zeros (padding taps, a kernel row's run)
  const float* bias = nullptr;      // [Cout] or null
  const float* residual = nullptr;  // output shape or null
  float* y = nullptr;               // [N, OD, OH, OW, Cout]
  gemm::Act act = gemm::Act::none;
  // When set (bf16 / f16 in and out, no residual): the finished outputs,
  // rounded once from f32, go here (same layout as y); y then holds only
  // partial sums between input-channel blocks and the f32 tiles rounded
  // from.
  void* y_out = nullptr;
  DType y_out_t = DType::f32;
  // The finished f32 outputs go to y with non-temporal stores (y_out null;
  // every output vector whole and aligned: y at 64 bytes, cout and cout_g
  // multiples of 16).
  bool stream = false;
};

using DirectFn = void (*)(const DirectArgs& a);

// The kernel keeps one tile's input pointers for every tap (at most
// kDirectMaxTaps) to walk the sub-blocks; larger kernels take all channels
// as one sub-block (rows (tap, ic), pointers recomputed per tap).
inline constexpr int64_t kDirectMaxTaps = 64;
// A sub-block's inner loop should run long enough to hide its setup and
// exit: 64 channels (AVX2: 16 lost 3-5% on the Xeon; AVX-512 on Zen 4,
// against 16: 320->320 64x64 6% faster, 512->512 64x64 11%, 128->128
// 256x256 6%, deep layers even), and its inputs (16 pixels x 3 rows x 256 B
// for a 3x3 kernel) still fit L1.
inline int64_t direct_sub_block(int64_t taps, int64_t cin_g, Isa) {
  constexpr int64_t kSub = 64;
  return taps <= kDirectMaxTaps ? std::min(kSub, cin_g) : cin_g;
}
// Row of weight (tap t, input channel ic) in the packed order above.
inline int64_t direct_row(int64_t t, int64_t ic, int64_t taps, int64_t cin_g, int64_t sub) {
  const int64_t s0 = ic / sub * sub, len = std::min(sub, cin_g - s0);
  return s0 * taps + t * len + (ic - s0);
}

}  // namespace opsnn::conv

namespace opsnn::conv {
// The ISA's kernel, nullptr where it has none (scalar); direct_nr: output
// channels per packed panel (2 vectors).
DirectFn direct_fn_avx2();
DirectFn direct_fn_avx512();
inline DirectFn direct_fn(Isa isa) {
  if (isa == Isa::avx512) return direct_fn_avx512();
  if (isa == Isa::avx2) return direct_fn_avx2();
  return nullptr;
}
inline int direct_nr(Isa isa) { return isa == Isa::avx512 ? 32 : isa == Isa::avx2 ? 16 : 0; }
}  // namespace opsnn::conv

namespace opsnn::conv {

// The bf16 form on AVX512_BF16 (kernels/conv_direct_avx512bf16.cc): bf16
// input, weight and output, f32 accumulation with vdpbf16ps over pairs of
// input channels (the GEMM's bf16 pair panels, rows (tap, ic); needs an even
// number of input channels per group so that no pair straddles two taps).
// Partial sums between input-channel blocks stay in f32 on the task's stack.
struct DirectBf16Args {
  Window w;
  int64_t n = 0, cin = 0, cout = 0, groups = 1, cin_g = 0, cout_g = 0;
  const bf16* x = nullptr;
  const uint16_t* packed = nullptr;  // bf16 pair panels per group
  int64_t group_stride = 0;          // uint16 elements between groups
  const bf16* zeros = nullptr;
  const void* bias = nullptr;  // [Cout], dtype bias_t (f32 or bf16) or null
  DType bias_t = DType::f32;
  const void* residual = nullptr;  // output shape, dtype res_t (f32 or bf16) or null
  DType res_t = DType::f32;
  bf16* y = nullptr;
  gemm::Act act = gemm::Act::none;
  // Few input channels (ConvPlan::direct_bf16_runs_ok): each tile's channel
  // pairs over all taps are copied once, in the packed weights' order, and
  // every panel runs one loop over them.
  bool runs = false;
  // Whole panels of y written with non-temporal stores (a large, aligned
  // output whose channels fill whole panels).
  bool stream = false;
};
// Most channel pairs over all taps of the runs path (its per-tile copy).
inline constexpr int64_t kDirectBf16RunPairs = 256;
void direct_bf16_avx512bf16(const DirectBf16Args& a);

}  // namespace opsnn::conv

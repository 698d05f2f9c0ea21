// The quantization family: kernel interfaces shared by the per-ISA files.
//
//   quantize          y = saturate(round_half_even(x / scale) + zero_point)   (ONNX QuantizeLinear)
//   dequantize        y = (x - zero_point) * scale                            (ONNX
//   DequantizeLinear) quantize_dynamic  per row (token) of the last axis: scale (and zero point)
//   from the row's
//                     absmax (symmetric) or min/max (asymmetric), then quantize
//   matmul_wq         y = x @ dequant(w)^T + bias, weight-only int8/int4 with group-wise scales
//
// All arithmetic is f32 in a fixed order (the references emulate it), so the
// integer outputs match the references exactly.
#pragma once

#include <cstdint>

#include "kernels/gemm/gemm.h"
#include "opsnn/cpu.h"
#include "opsnn/dtype.h"

namespace opsnn::quant {

// x viewed as [outer, channels, inner]; scale/zero point indexed by channel
// (channels == 1: per tensor). Zero point dtype = y dtype (i8/u8); nullptr: 0.
struct QuantizeArgs {
  DType xt = DType::f32;  // f32 | bf16
  const void* x = nullptr;
  DType yt = DType::i8;  // i8 | u8
  void* y = nullptr;
  int64_t outer = 0, channels = 0, inner = 0;
  const float* scale = nullptr;
  const void* zp = nullptr;
};
using QuantizeFn = void (*)(const QuantizeArgs&);

// y = (x - zp) * scale; x i8/u8/i32 (zp same dtype as x), y f32/bf16.
struct DequantizeArgs {
  DType xt = DType::i8;
  const void* x = nullptr;
  DType yt = DType::f32;
  void* y = nullptr;
  int64_t outer = 0, channels = 0, inner = 0;
  const float* scale = nullptr;
  const void* zp = nullptr;
};
using DequantizeFn = void (*)(const DequantizeArgs&);

// Per row of `cols` elements: scale[r], zp[r] (y dtype), y.
struct DynamicArgs {
  DType xt = DType::f32;
  const void* x = nullptr;
  DType yt = DType::i8;
  void* y = nullptr;
  float* scale = nullptr;
  void* zp = nullptr;
  int64_t rows = 0, cols = 0;
  bool symmetric = true;
  // The output levels (dynamic_levels): y in [qmin, qmax]; the scale is
  // absmax / sym_levels (symmetric) or (max - min) / asym_levels.
  float qmin = -128, qmax = 127, sym_levels = 127, asym_levels = 255;
};
// The levels of quantize_dynamic for an output dtype (u8 or i8), symmetric or
// not, full range or ONNX Runtime's reduce_range (7-bit: weights that the
// AVX2 int8 GEMM without VNNI multiplies with vpmaddubsw, exactly).
void dynamic_levels(bool u8, bool symmetric, bool reduce_range, DynamicArgs* a);
using DynamicFn = void (*)(const DynamicArgs&);

// The two paths of matmul_wq, chosen by M (rows of x):
//  * M < panel_min_m: the tiled kernel (weights unpacked in registers, once
//    per 4 rows of x; the decode path);
//  * M >= panel_min_m: the panel path. Each task dequantizes panel_cols weight
//    rows (all of K) straight into the f32 GEMM engine's packed-B layout in
//    its own workspace slot (a 16x16 byte transpose, then (q - zp) * scale per
//    vector of weight rows) and runs the engine over all M rows of x on it:
//    each weight is dequantized once per call.
// The defaults come from measurements (docs/quantization.md); the op's
// attributes panel_min_m and panel_cols override them (tuning knobs, read at
// create: the workspace is sized from them).
struct WqPaths {
  int64_t panel_min_m = 24;
  int64_t panel_cols = 0;  // 0: 256 for M < 512, else 512; rounded up to max(16, nr)
};
// Weight-only quantized matmul. x [M, K] contiguous (f32/bf16); w is [N, K]
// int8 (bits 8) or [N, K/2] bytes holding two unsigned 4-bit values (bits 4:
// k even in the low nibble, k odd in the high nibble); scales [N, K/group] f32;
// zp [N, K/group] (bits 8: int8, default 0; bits 4: uint8 in 0..15, default
// 8); w_real = (q - zp) * scale. y [M, N] = x @ w_real^T + bias.
struct WqArgs {
  int64_t M = 0, N = 0, K = 0;
  int bits = 4, group = 128;
  DType xt = DType::f32;
  const void* x = nullptr;
  const uint8_t* w = nullptr;
  const float* scales = nullptr;
  const void* zp = nullptr;
  DType bt = DType::f32;
  const void* bias = nullptr;
  DType yt = DType::f32;
  void* y = nullptr;
  void* ws = nullptr;     // wq_workspace_bytes(paths, M, N, K, group, isa, xt, yt, threads)
  Isa isa = Isa::scalar;  // the kernel's ISA (the f32 GEMM path uses the same level)
  WqPaths paths;          // as at create
  int threads = 1;        // num_threads() at create (the workspace's engine slots)
};
using WqFn = void (*)(const WqArgs&);

// Weight rows per task of the panel path for the engine's nr and M.
int64_t wq_panel_cols(const WqPaths& paths, int nr, int64_t M);
// Workspace slots of the panel path: one per logical core (fixed for the
// process, so a workspace sized once stays valid whatever set_num_threads()
// does later), at most one per task.
int wq_panel_slots(const WqPaths& paths, int64_t M, int64_t N);
// The panel path's engine parameters for activations of dtype xt.
gemm::Params wq_gemm_params(Isa isa, DType xt);
// A panel slot: the dequantized panel, then the engine's scratch: for one
// thread, or for `threads` (the count at create) when there is one panel
// task and the engine runs threaded inside it.
struct WqSlot {
  size_t panel = 0, bytes = 0;
  int engine_threads = 1;
};
WqSlot wq_slot(const WqPaths& paths, int64_t M, int64_t N, int64_t K, Isa isa, DType xt, DType yt,
               int threads);
size_t wq_workspace_bytes(const WqPaths& paths, int64_t M, int64_t N, int64_t K, int group, Isa isa,
                          DType xt, DType yt, int threads);

struct Fns {
  QuantizeFn quantize;
  DequantizeFn dequantize;
  DynamicFn dynamic;
  WqFn wq;
};
const Fns& fns_scalar();
const Fns& fns_avx2();
const Fns& fns_avx512();

}  // namespace opsnn::quant

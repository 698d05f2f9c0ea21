// bf16 convolution on AMX tiles (Sapphire Rapids and later): an implicit
// GEMM out[pixels, Cout_g] = col[pixels, K] · W[K, Cout_g] per group, with
// K = (tap, input channel) padded to a multiple of 32.
//
// Per task (image, group, run of up to 256 pixels, part of the output
// channels) and K block, the input patches of its pixels are gathered into
// the workspace (im2col, zeros for padding taps and the K tail: a row per
// pixel, so stride, dilation, padding, row ends and 1-D / 3-D windows are
// all one case); then every block of 32 pixels x 32 output channels is
// 2 x 2 tiles of 16 x 16 f32 sums: per 32 K, two A tiles (16 pixels x 32
// bf16) from the gathered rows and two B tiles from the weight, packed at
// create in the tiles' pair layout. Sums are kept in f32 between K blocks
// (stored and loaded exactly). Bias, activation and residual are applied to
// the f32 sums after the last K block, rounded once to bf16. Each output's
// sums run in one fixed K order: results do not depend on the thread count.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/gemm/gemm.h"
#include "ops/conv/conv_engine.h"
#include "ops/conv/conv_geom.h"
#include "opsnn/dtype.h"

namespace opsnn::conv {

inline constexpr int64_t kAmxK = 32;      // bf16 per A-tile row (64 bytes)
inline constexpr int64_t kAmxM = 32;      // pixels per block (two A tiles)
inline constexpr int64_t kAmxN = 32;      // output channels per block (two B tiles)
inline constexpr int64_t kAmxTile = 512;  // bf16 elements in one tile (1 KiB)

struct AmxConvArgs {
  Window w;
  int64_t n = 0, cin = 0, cout = 0, groups = 1, cin_g = 0, cout_g = 0;
  int64_t kpad = 0;  // taps * cin_g rounded up to kAmxK
  int64_t lda = 0;   // bf16 elements between gathered rows (k_block, or more off a 4 KiB stride)
  int64_t px_per_task = 0;  // pixels gathered per task (a multiple of kAmxM)
  int64_t oc_parts = 1;     // tasks per run of pixels, each a part of the 32-channel blocks
  int64_t k_block = 0;      // K per block (a multiple of kAmxK)
  const bf16* x = nullptr;  // [N, D, H, W, Cin]
  const uint16_t* packed = nullptr;  // per group: amx_packed_elems(kpad, cout_g)
  const void* bias = nullptr;        // [Cout], bias_t (f32 or bf16), or null
  DType bias_t = DType::f32;
  const void* residual = nullptr;  // output shape, res_t (f32 or bf16), or null
  DType res_t = DType::f32;
  bf16* y = nullptr;  // [N, OD, OH, OW, Cout]
  gemm::Act act = gemm::Act::none;
  bf16* gather = nullptr;    // per thread slot: px_per_task * lda bf16
  size_t gather_stride = 0;  // bf16 elements between slots
  float* sums = nullptr;     // per slot: px_per_task x a part's channel blocks, f32
  size_t sums_stride = 0;    // floats between slots
  int slots = 1;
};

// Tiles packed for one group's weight [cout_g][cin_g][taps] (bf16 bits):
// for each block of 32 output channels, for each K step s of 32 (16 pairs),
// two tiles (channels +0..15, +16..31) whose row r holds the pairs
// (k = 32 s + 2 r, +1) of its 16 channels: a block's K loop reads one
// contiguous run. Zeros past cout_g and past K = taps * cin_g.
int64_t amx_packed_elems(int64_t kpad, int64_t cout_g);
void amx_pack_group(const uint16_t* w, int64_t cin_g, int64_t taps, int64_t cout_g, int64_t kpad,
                    uint16_t* dst);

void conv_amx_bf16(const AmxConvArgs& a);  // kernels/conv_amx.cc

// Whether the AMX kernel (convNd_amx, registered where has_amx_bf16())
// takes this call: bf16 x, w and y, f32 or bf16 bias and residual, not
// depthwise (the depthwise kernels are faster than K = taps padded to 32).
bool amx_conv_ok(const OpCall& call, const ConvPlan& p);
std::unique_ptr<KernelInstance> make_amx_conv_instance(const OpCall& call, const ConvPlan& p);

}  // namespace opsnn::conv

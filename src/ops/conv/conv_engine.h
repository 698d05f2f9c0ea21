// The convolution engine: an implicit GEMM over the GEMM engine
// (src/kernels/gemm). Per image and tile of output pixels, the input patches
// are gathered (im2col, zero padding applied while gathering, no padded copy
// of the input) into a workspace tile and multiplied by the packed weight:
//   out[pixels, Cout_g] = col[pixels, K_g] · W_g[K_g, Cout_g]   per group
// with bias, activation and residual fused in the GEMM epilogue. Channels
// last writes the GEMM output in place; channels first writes an f32 tile
// that is transposed into the output. 1x1 stride-1 unpadded convolutions
// read the input in place (no gather). The weight is packed once at create
// when it is a constant operand, else per call into the workspace.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/gemm/gemm.h"
#include "ops/conv/conv_geom.h"
#include "opsnn/op.h"

namespace opsnn::conv {

struct ConvPlan {
  std::string op;  // for errors at run
  Window w;
  bool cl = false;         // channels last
  bool pointwise = false;  // 1x1, stride 1, no padding: no gather
  int64_t n = 0, cin = 0, cout = 0, groups = 1, cin_g = 0, cout_g = 0, kg = 0;
  gemm::Act act = gemm::Act::none;
  DType xt = DType::f32, wt = DType::f32, ot = DType::f32;
  int64_t mt = 0;  // output pixels per tile
  // f32 everywhere, not 1x1 (channels first: no residual): the direct
  // kernel may run it.
  bool direct_ok = false;
  // The same in bf16 with an even number of input channels per group.
  bool direct_bf16_ok = false;
  // bf16 with an even number of 4-30 input channels per group and at most
  // kDirectBf16RunPairs channel pairs over all taps (the UNet's stem): the
  // bf16 kernel's runs path, one copy of the tile's pairs for all panels.
  bool direct_bf16_runs_ok = false;
  // bf16 or f16 x, w and y with few input channels (the UNet's stem, where
  // the gather + GEMM is slow) and no residual: the f32 direct kernel on f32
  // copies of x, bias and y in the workspace (weights packed as f32).
  bool direct_widen_ok = false;
  // The same with 32 or more input channels per group: taken at AVX2, where
  // the gather + GEMM on 16-bit panels converts the weights in the
  // microkernel's loads, and on Zen 3 those conversions share pipes with the
  // FMAs (bf16 at 0.89-0.95x the f32 convolution's speed on the large maps).
  // Only while the f32 copies of x and y take at most 32 MiB of workspace.
  bool direct_widen_many_ok = false;
};

// Workspace regions start on 64-byte boundaries.
inline size_t round64(size_t b) { return (b + 63) / 64 * 64; }

// Input i is absent, f32 or bf16 (the bias and residual dtypes the bf16
// kernels take).
inline bool f32_bf16_or_absent(const OpCall& call, size_t i) {
  return !call.has_input(i) || call.in(i).dtype == DType::f32 || call.in(i).dtype == DType::bf16;
}

// x: input 0, w: input 1, bias: input 2 (optional), residual: input 3 (optional).
ConvPlan conv_plan(const OpCall& call, const Window& w, bool cl);

// The kernel instance for `isa` (gemm microkernel 0 of that ISA); depthwise
// calls go to their own kernels (depthwise.h).
std::unique_ptr<KernelInstance> make_conv_instance(const OpCall& call, const ConvPlan& plan,
                                                   Isa isa);

// Dense convolutions keep partial sums in the output between blocks of
// input channels: a residual that shares memory with the output would be
// overwritten before it is added. Throws opsnn::Error naming the residual
// (depthwise kernels read each residual value once, before writing it, and
// take it in place).
void reject_residual_in_output(const ConvPlan& p, const Tensor& residual, const Tensor& out);

// Logs once per op that its weight is packed per call (not a constant).
void note_weight_per_call(const OpCall& call);

// A kernel instance with its weight (input 1) packed once when it is a
// constant operand (Inst::prepack), else noted as packed per call.
template <class Inst>
std::unique_ptr<KernelInstance> with_weight(const OpCall& call, std::unique_ptr<Inst> inst) {
  if (const Tensor* w = call.constant(1))
    inst->prepack(*w);
  else
    note_weight_per_call(call);
  return inst;
}

// Bias (input 2) and residual (input 3) as pointer + dtype, where given.
template <class Args>
void set_bias_residual(const Tensor* in, Args& a) {
  if (in[2].data()) {
    a.bias = in[2].data();
    a.bias_t = in[2].dtype();
  }
  if (in[3].data()) {
    a.residual = in[3].data();
    a.res_t = in[3].dtype();
  }
}

// The geometry every convolution kernel's arguments share.
template <class Args>
void set_geometry(const ConvPlan& p, Args& a) {
  a.w = p.w;
  a.n = p.n;
  a.cin = p.cin;
  a.cout = p.cout;
  a.groups = p.groups;
  a.cin_g = p.cin_g;
  a.cout_g = p.cout_g;
}

}  // namespace opsnn::conv

// The fused activations of conv / conv_transpose: the shared activation
// vocabulary (src/kernels/act), as in the GEMM epilogues.
#pragma once

#include <string>

#include "kernels/act/act.h"
#include "kernels/gemm/gemm.h"
#include "opsnn/op.h"

namespace opsnn::conv {

inline AttrSpec activation_attr() {
  return {"activation", AttrType::str, std::string("none"),
          "fused after the bias: none|relu|gelu|gelu_tanh|silu"};
}

inline gemm::Act act_of(const OpCall& call) {
  return act::from_name(call.op(), call.attrs.s("activation"));
}

// float64 form of the same activations (the shared reference).
inline double ref_act(double x, gemm::Act a) { return act::reference(a, x); }

}  // namespace opsnn::conv

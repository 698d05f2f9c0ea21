// The fused activations of conv / conv_transpose: the GEMM epilogue's kinds
// (gemm::Act). Every use of them by this family goes through this header, so
// a later project-wide activation module replaces one file.
#pragma once

#include <cmath>
#include <string>

#include "kernels/gemm/gemm.h"
#include "ops/matmul/matmul/matmul_plan.h"
#include "opsnn/op.h"

namespace opsnn::conv {

inline AttrSpec activation_attr() {
  return {"activation", AttrType::str, std::string("none"),
          "fused after the bias: none|relu|gelu|gelu_tanh|silu"};
}

inline gemm::Act act_of(const OpCall& call) {
  return matmul::act_from_name(call, call.attrs.s("activation"));
}

// float64 form of the same activations (NaN propagates through each).
inline double ref_act(double x, gemm::Act act) {
  constexpr double kPi = 3.14159265358979323846;
  switch (act) {
    case gemm::Act::none:
      return x;
    case gemm::Act::relu:
      return std::isnan(x) ? x : (x > 0 ? x : 0);
    case gemm::Act::gelu_erf:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case gemm::Act::gelu_tanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / kPi) * (x + 0.044715 * x * x * x)));
    case gemm::Act::silu:
      return x / (1 + std::exp(-x));
  }
  return x;
}

}  // namespace opsnn::conv

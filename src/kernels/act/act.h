// The activation vocabulary shared by the activation ops and every fused
// epilogue (GEMM, int8 GEMM, convolution): the kinds, their attribute names
// and their float64 reference, in one table.
#pragma once

#include <string>

namespace opsnn::act {

enum class Kind : int { none, relu, gelu_erf, gelu_tanh, silu };

// The `activation` attribute's value for a kind ("none", "relu", "gelu",
// "gelu_tanh", "silu") and back. from_name throws the standard error naming
// `op` and the attribute, with the accepted names.
const char* name(Kind k);
Kind from_name(const std::string& op, const std::string& name);
const std::string& names();  // "none|relu|gelu|gelu_tanh|silu"

// float64 references, following the special-value policy (docs/special_values.md):
// NaN propagates, +-inf give the limit (silu(-inf) = gelu(-inf) = -0).
double reference(Kind k, double x);
double silu_ref(double x, double k = 1.0);  // x * sigmoid(k x)
double gelu_ref(double x, bool tanh_form);
double relu_ref(double x);

}  // namespace opsnn::act

#include "kernels/act/act.h"

#include <cmath>

#include "opsnn/error.h"

namespace opsnn::act {
namespace {

struct Row {
  Kind kind;
  const char* name;
};
constexpr Row kTable[] = {{Kind::none, "none"},
                          {Kind::relu, "relu"},
                          {Kind::gelu_erf, "gelu"},
                          {Kind::gelu_tanh, "gelu_tanh"},
                          {Kind::silu, "silu"}};

}  // namespace

const char* name(Kind k) {
  for (const Row& r : kTable)
    if (r.kind == k) return r.name;
  return "?";
}

const std::string& names() {
  static const std::string all = [] {
    std::string s;
    for (const Row& r : kTable) s += (s.empty() ? "" : "|") + std::string(r.name);
    return s;
  }();
  return all;
}

Kind from_name(const std::string& op, const std::string& n) {
  for (const Row& r : kTable)
    if (n == r.name) return r.kind;
  throw Error(op, "attribute 'activation'", names(), "'" + n + "'");
}

double relu_ref(double x) { return std::isnan(x) || x > 0 ? x : 0.0; }

double silu_ref(double x, double k) {
  if (std::isinf(x)) return x > 0 ? x : -0.0;  // x / (1 + e^-kx) is inf/inf at -inf
  return x / (1 + std::exp(-k * x));
}

double gelu_ref(double x, bool tanh_form) {
  if (std::isinf(x)) return x > 0 ? x : -0.0;  // x * 0 at -inf
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  if (tanh_form) {
    // 0.5 x (1 + tanh(u)) = x / (1 + e^-2u): no inf * 0 once x^3 overflows.
    const double u = kSqrt2OverPi * (x + 0.044715 * x * x * x);
    return u < -350 ? (x < 0 ? -0.0 : 0.0) : 0.5 * x * (1 + std::tanh(u));
  }
  return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
}

double reference(Kind k, double x) {
  switch (k) {
    case Kind::none:
      return x;
    case Kind::relu:
      return relu_ref(x);
    case Kind::gelu_erf:
      return gelu_ref(x, false);
    case Kind::gelu_tanh:
      return gelu_ref(x, true);
    case Kind::silu:
      return silu_ref(x);
  }
  return x;
}

}  // namespace opsnn::act

// Schemas, float64 references and kernel registration of the unary ops.
#include "ops/activation/unary/unary.h"

#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "kernels/act/act.h"
#include "ops/builtin_ops.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

using unary::Kind;

struct UnaryDef {
  const char* name;
  Kind kind;
  const char* doc;
  std::function<double(double, const Attrs&)> ref;
  ValueRange range = {-5, 5};
  std::vector<AttrSpec> attrs = {};
};

double softplus_ref(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

std::vector<UnaryDef> unary_defs() {
  return {
      {"relu", Kind::relu, "max(x, 0); NaN stays NaN",
       [](double x, const Attrs&) { return act::relu_ref(x); }},
      {"leaky_relu",
       Kind::leaky_relu,
       "x if x >= 0 else alpha * x",
       [](double x, const Attrs& a) { return x >= 0 ? x : a.f("alpha") * x; },
       {-5, 5},
       {{"alpha", AttrType::f64, 0.01, "slope for x < 0"}}},
      {"gelu",
       Kind::gelu_erf,
       "x * Phi(x); approximate='tanh' uses the tanh form",
       [](double x, const Attrs& a) { return act::gelu_ref(x, a.s("approximate") == "tanh"); },
       {-6, 6},
       {{"approximate", AttrType::str, std::string("none"), "none (erf) or tanh"}}},
      {"quick_gelu", Kind::quick_gelu, "x * sigmoid(1.702 x) (CLIP)",
       [](double x, const Attrs&) { return act::silu_ref(x, 1.702); }},
      {"silu",
       Kind::silu,
       "x * sigmoid(x)",
       [](double x, const Attrs&) { return act::silu_ref(x); },
       {-10, 10}},
      {"sigmoid",
       Kind::sigmoid,
       "1 / (1 + exp(-x))",
       [](double x, const Attrs&) { return 1 / (1 + std::exp(-x)); },
       {-10, 10}},
      {"tanh", Kind::tanh, "hyperbolic tangent",
       [](double x, const Attrs&) { return std::tanh(x); }},
      {"exp", Kind::exp, "e^x", [](double x, const Attrs&) { return std::exp(x); }, {-10, 10}},
      {"log",
       Kind::log,
       "natural logarithm (NaN for x < 0, -inf at 0)",
       [](double x, const Attrs&) { return std::log(x); },
       {0.001, 100}},
      {"sqrt",
       Kind::sqrt,
       "square root",
       [](double x, const Attrs&) { return std::sqrt(x); },
       {0, 100}},
      {"rsqrt",
       Kind::rsqrt,
       "1 / sqrt(x)",
       [](double x, const Attrs&) { return 1 / std::sqrt(x); },
       {0.01, 100}},
      {"reciprocal",
       Kind::reciprocal,
       "1 / x",
       [](double x, const Attrs&) { return 1 / x; },
       {0.1, 10}},
      {"neg", Kind::neg, "-x", [](double x, const Attrs&) { return -x; }},
      {"abs", Kind::abs, "|x|", [](double x, const Attrs&) { return std::fabs(x); }},
      {"erf", Kind::erf, "error function", [](double x, const Attrs&) { return std::erf(x); }},
      {"softplus",
       Kind::softplus,
       "log(1 + e^x)",
       [](double x, const Attrs&) { return softplus_ref(x); },
       {-20, 20}},
      {"mish",
       Kind::mish,
       "x * tanh(softplus(x))",
       [](double x, const Attrs&) {
         return x == -INFINITY ? -0.0 : x * std::tanh(softplus_ref(x));
       },
       {-10, 10}},
      {"hardswish", Kind::hardswish, "x * relu6(x + 3) / 6",
       [](double x, const Attrs&) {
         return x <= -3 ? 0.0 : x * (std::min(std::max(x + 3, 0.0), 6.0) / 6);
       }},
      {"clip",
       Kind::clip,
       "min(max(x, min), max)",
       [](double x, const Attrs& a) { return std::min(std::max(x, a.f("min")), a.f("max")); },
       {-5, 5},
       {{"min", AttrType::f64, -1.0, "lower bound"}, {"max", AttrType::f64, 1.0, "upper bound"}}},
      {"floor", Kind::floor, "largest integer <= x",
       [](double x, const Attrs&) { return std::floor(x); }},
      {"ceil", Kind::ceil, "smallest integer >= x",
       [](double x, const Attrs&) { return std::ceil(x); }},
      {"round", Kind::round, "nearest integer, halves to even (ONNX Round)",
       [](double x, const Attrs&) { return std::nearbyint(x); }},
      {"sign", Kind::sign, "1 for x > 0, -1 for x < 0, x itself for 0 and NaN",
       [](double x, const Attrs&) { return x > 0   ? 1.0
                                           : x < 0 ? -1.0
                                                   : x; }},
  };
}

unary::Params params_of(const OpCall& call) {
  unary::Params p;
  if (call.op() == "leaky_relu") p.alpha = static_cast<float>(call.attrs.f("alpha"));
  if (call.op() == "clip") {
    p.alpha = static_cast<float>(call.attrs.f("min"));
    p.beta = static_cast<float>(call.attrs.f("max"));
  }
  return p;
}

Kind kind_of(const OpCall& call, Kind base) {
  if (base == Kind::gelu_erf && call.attrs.s("approximate") == "tanh") return Kind::gelu_tanh;
  return base;
}

void add_unary(Registry& r, const UnaryDef& d) {
  OpSchema s;
  s.name = d.name;
  s.family = "activation";
  s.doc = d.doc;
  s.inputs = {{"x", "input tensor"}};
  s.outputs = {{"y", "same shape and dtype as x"}};
  s.attrs = d.attrs;
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    ops::require_float(call, 0);
    if (call.op() == "gelu") {
      const std::string& a = call.attrs.s("approximate");
      if (a != "none" && a != "tanh")
        call.fail("attribute 'approximate'", "none|tanh", "'" + a + "'");
    }
    if (call.op() == "clip" && call.attrs.f("min") > call.attrs.f("max"))
      call.fail("attribute 'min'", "min <= max",
                std::to_string(call.attrs.f("min")) + " > " + std::to_string(call.attrs.f("max")));
    return std::vector<TensorDesc>{TensorDesc(call.in(0).dtype, call.in(0).shape)};
  };
  s.reference = [ref = d.ref](const OpCall& call, const std::vector<RefTensor>& in,
                              std::vector<RefTensor>& out) {
    for (size_t i = 0; i < in[0].data.size(); ++i) out[0].data[i] = ref(in[0].data[i], call.attrs);
  };
  s.cases = [range = d.range, name = std::string(d.name)](DType t) {
    std::vector<CheckCase> cs;
    for (const Shape& sh : ops::elementwise_shapes())
      cs.push_back({shape_str(sh), {TensorDesc(t, sh)}, {}, {range}});
    cs.push_back({"strided[33,17]^T", {ops::transposed_desc(t, 33, 17)}, {}, {range}});
    if (name == "gelu")
      cs.push_back(
          {"tanh[1000]", {TensorDesc(t, {1000})}, {{"approximate", std::string("tanh")}}, {range}});
    if (name == "leaky_relu")
      cs.push_back({"alpha0.2[100]", {TensorDesc(t, {100})}, {{"alpha", 0.2}}, {range}});
    if (name == "clip")
      cs.push_back(
          {"min-0.5max2[100]", {TensorDesc(t, {100})}, {{"min", -0.5}, {"max", 2.0}}, {range}});
    return cs;
  };
  r.add_op(std::move(s));

  ops::add_isa_kernels(
      r, d.name,
      ops::PerIsa<unary::RunFn>{unary::run_avx512(), unary::run_avx2(), unary::run_scalar()},
      [base = d.kind](unary::RunFn fn, Isa) -> KernelFactory {
        // The kind and parameters are read from the attributes once, at create.
        struct Instance : KernelInstance {
          unary::RunFn fn = nullptr;
          Kind kind = Kind::relu;
          unary::Params p;
          void run(const Tensor* in, Tensor* out, void*) override {
            fn(kind, in[0].dtype(), in[0].data(), out[0].data(), in[0].numel(), p);
          }
        };
        return [fn, base](const OpCall& call, std::string*) -> std::unique_ptr<KernelInstance> {
          auto k = std::make_unique<Instance>();
          k->fn = fn;
          k->kind = kind_of(call, base);
          k->p = params_of(call);
          return k;
        };
      });
}

}  // namespace

void register_unary_ops(Registry& r) {
  for (const UnaryDef& d : unary_defs()) add_unary(r, d);
}

}  // namespace opsnn

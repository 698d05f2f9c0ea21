// Schemas, float64 references, case tables and kernels of the gated
// activations swiglu and geglu.
//
// Both take one tensor x [..., 2H] holding the two projections of a gated FFN
// side by side on the last axis and return y [..., H] = act(gate) * value.
// Which half is the gate is the attribute `gate_first`:
//   swiglu  default gate_first=1: x = [gate, up], y = silu(gate) * up
//           (the fused gate_up projection of LLaMA-style FFNs, vLLM SiluAndMul).
//   geglu   default gate_first=0: x = [hidden, gate], y = hidden * gelu(gate)
//           (diffusers GEGLU: hidden, gate = proj(x).chunk(2, dim=-1)).
//           approximate = none (erf, the diffusers default) | tanh.
#include "ops/activation/gated/gated.h"

#include <cmath>
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

gated::Kind kind_of(const OpCall& call) {
  if (call.op() == "swiglu") return gated::Kind::swiglu;
  return call.attrs.s("approximate") == "tanh" ? gated::Kind::geglu_tanh : gated::Kind::geglu_erf;
}

std::vector<CheckCase> gated_cases(DType t, const std::string& op) {
  const ValueRange r = {-6, 6};
  std::vector<CheckCase> cs;
  for (int64_t h : {0, 1, 7, 8, 15, 16, 17, 33, 1000})
    cs.push_back({"[3," + std::to_string(2 * h) + "]", {TensorDesc(t, {3, 2 * h})}, {}, {r}});
  cs.push_back({"[2]", {TensorDesc(t, {2})}, {}, {r}});
  cs.push_back({"[0,34]", {TensorDesc(t, {0, 34})}, {}, {r}});
  cs.push_back({"[2,5,7,66]", {TensorDesc(t, {2, 5, 7, 66})}, {}, {r}});
  cs.push_back({"large[2,65538]", {TensorDesc(t, {2, 65538})}, {}, {r}});
  cs.push_back({"large[65537,2]", {TensorDesc(t, {65537, 2})}, {}, {r}});
  cs.push_back({"strided[17,34]^T", {ops::transposed_desc(t, 17, 34)}, {}, {r}});
  cs.push_back({"gate_last[5,66]",
                {TensorDesc(t, {5, 66})},
                {{"gate_first", int64_t{op == "swiglu" ? 0 : 1}}},
                {r}});
  if (op == "geglu")
    cs.push_back(
        {"tanh[5,2000]", {TensorDesc(t, {5, 2000})}, {{"approximate", std::string("tanh")}}, {r}});
  return cs;
}

class GatedKernel : public KernelInstance {
 public:
  GatedKernel(const OpCall& call, gated::RunFn fn)
      : fn_(fn), kind_(kind_of(call)), gate_first_(call.attrs.i("gate_first") != 0) {
    h_ = call.out(0).shape.back();
    rows_ = h_ ? call.out(0).numel() / h_ : 0;
  }
  void run(const Tensor* in, Tensor* out, void*) override {
    fn_(kind_, in[0].dtype(), in[0].data(), out[0].data(), rows_, h_, gate_first_);
  }

 private:
  gated::RunFn fn_;
  gated::Kind kind_;
  bool gate_first_;
  int64_t h_ = 0, rows_ = 0;
};

void add_gated(Registry& r, const std::string& name) {
  const bool swiglu = name == "swiglu";
  OpSchema s;
  s.name = name;
  s.family = "activation";
  s.doc = swiglu ? "x = [gate, up] on the last axis (gate_first=1): y = silu(gate) * up"
                 : "x = [hidden, gate] on the last axis (gate_first=0, diffusers GEGLU): y = "
                   "hidden * gelu(gate)";
  s.inputs = {{"x", "[..., 2H]: both halves side by side on the last axis"}};
  s.outputs = {{"y", "[..., H], dtype of x"}};
  s.attrs = {{"gate_first", AttrType::i64, int64_t{swiglu ? 1 : 0},
              "1: the gate is the first half of the last axis, 0: the second half"}};
  if (!swiglu)
    s.attrs.push_back(
        {"approximate", AttrType::str, std::string("none"), "gelu form: none (erf) or tanh"});
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    ops::require_float(call, 0);
    ops::require_rank_at_least(call, 0, 1);
    const Shape& xs = call.in(0).shape;
    if (xs.back() % 2 != 0) call.fail("input 'x'", "an even last dimension (2H)", shape_str(xs));
    const int64_t gf = call.attrs.i("gate_first");
    if (gf != 0 && gf != 1) call.fail("attribute 'gate_first'", "0 or 1", std::to_string(gf));
    if (call.op() == "geglu") {
      const std::string& a = call.attrs.s("approximate");
      if (a != "none" && a != "tanh")
        call.fail("attribute 'approximate'", "none|tanh", "'" + a + "'");
    }
    Shape ys = xs;
    ys.back() /= 2;
    return std::vector<TensorDesc>{TensorDesc(call.in(0).dtype, ys)};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in,
                   std::vector<RefTensor>& out) {
    const size_t h = static_cast<size_t>(out[0].shape.back());
    if (h == 0) return;
    const bool gf = call.attrs.i("gate_first") != 0;
    const bool sw = call.op() == "swiglu";
    const bool tanh_form = !sw && call.attrs.s("approximate") == "tanh";
    for (size_t o = 0; o < out[0].data.size(); ++o) {
      const size_t r = o / h, j = o % h;
      const double first = in[0].data[r * 2 * h + j], second = in[0].data[r * 2 * h + h + j];
      const double g = gf ? first : second, v = gf ? second : first;
      // act(g) is non-zero for a finite non-zero g even where it underflows
      // (gelu(-40) ~ -1e-348): an infinite v then gives an infinity.
      const bool inf_v = std::isinf(v) && std::isfinite(g) && g != 0;
      out[0].data[o] = inf_v ? std::copysign(INFINITY, v * g)
                             : (sw ? act::silu_ref(g) : act::gelu_ref(g, tanh_form)) * v;
    }
  };
  s.cases = [name](DType t) { return gated_cases(t, name); };
  // gelu's absolute error in f32 (~3e-7 where 1 + erf(x/sqrt2) cancels, x < -3)
  // is multiplied by |value| <= 6 in the cases: f32 atol 5e-6 instead of 1e-6.
  if (!swiglu)
    s.tolerance = [](DType t) {
      return t == DType::f32 ? Tolerance{5e-6, 1e-5} : default_tolerance(t);
    };
  r.add_op(std::move(s));

  ops::add_isa_kernels(
      r, name,
      ops::PerIsa<gated::RunFn>{gated::run_avx512(), gated::run_avx2(), gated::run_scalar()},
      [](gated::RunFn fn, Isa) {
        return [fn](const OpCall& call, std::string*) -> std::unique_ptr<KernelInstance> {
          return std::make_unique<GatedKernel>(call, fn);
        };
      });
}

}  // namespace

void register_gated_ops(Registry& r) {
  add_gated(r, "swiglu");
  add_gated(r, "geglu");
}

}  // namespace opsnn

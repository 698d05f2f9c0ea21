// Schemas, float64 references, case tables and kernel registration of the
// binary element-wise ops (NumPy broadcasting).
#include "ops/elementwise/binary/binary.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "opsnn/error.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

using binary::Kind;

struct BinaryDef {
  const char* name;
  Kind kind;
  const char* doc;
  double (*ref)(double, double);
  ValueRange ra = {-3, 3}, rb = {-3, 3};
};

double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

std::vector<BinaryDef> binary_defs() {
  return {
      {"add", Kind::add, "a + b", [](double a, double b) { return a + b; }},
      {"sub", Kind::sub, "a - b", [](double a, double b) { return a - b; }},
      {"mul", Kind::mul, "a * b", [](double a, double b) { return a * b; }},
      {"div",
       Kind::div,
       "a / b (IEEE: x/0 = +-inf)",
       [](double a, double b) { return a / b; },
       {-3, 3},
       {0.25, 4}},
      {"pow",
       Kind::pow,
       "a ^ b as exp(b log|a|) in f32; negative a with an odd integer b is negative, with a "
       "non-integer b NaN; "
       "pow(x, 0) = pow(1, y) = 1",
       [](double a, double b) { return std::pow(a, b); },
       {0.05, 4},
       {-3, 3}},
      {"maximum", Kind::maximum, "elementwise max; NaN in either input gives NaN", nan_max},
      {"minimum", Kind::minimum, "elementwise min; NaN in either input gives NaN", nan_min},
  };
}

class BinaryKernel : public KernelInstance {
 public:
  BinaryKernel(const OpCall& call, Kind kind, binary::RunFn fn)
      : kind_(kind),
        fn_(fn),
        plan_(ops::make_broadcast_plan(call.out(0).shape, {call.in(0).shape, call.in(1).shape})) {}
  void run(const Tensor* in, Tensor* out, void*) override {
    fn_(kind_, out[0].dtype(), plan_, in[0].data(), in[1].data(), out[0].data());
  }

 private:
  Kind kind_;
  binary::RunFn fn_;
  ops::BroadcastPlan plan_;
};

// `opsnn bench --case shape=AxB[,b=CxD]`: a has `shape`, b has `b` (default
// the same shape), e.g. shape=64x4096,b=4096 or shape=8x320x64x64,b=1x320x1x1.
CheckCase binary_bench_case(const std::string& op, const std::map<std::string, std::string>& kv,
                            DType t) {
  ops::CaseKeys keys(op, kv);
  const Shape a = keys.dims("shape", {int64_t{1} << 24});
  const Shape b = keys.dims("b", a);
  keys.done();
  CheckCase c;
  c.name = "bench";
  c.inputs = {TensorDesc(t, a), TensorDesc(t, b)};
  c.ranges = {{-3, 3}, {0.25, 4}};
  return c;
}

std::vector<CheckCase> binary_cases(DType t, ValueRange ra, ValueRange rb) {
  std::vector<CheckCase> cs;
  auto add = [&](std::string name, TensorDesc a, TensorDesc b) {
    cs.push_back({std::move(name), {std::move(a), std::move(b)}, {}, {ra, rb}});
  };
  for (const Shape& sh : ops::elementwise_shapes())
    add(shape_str(sh), TensorDesc(t, sh), TensorDesc(t, sh));
  add("scalar[1000]+[1]", TensorDesc(t, {1000}), TensorDesc(t, {1}));
  add("scalar[1]+[1000]", TensorDesc(t, {1}), TensorDesc(t, {1000}));
  add("rank0[3,5,7]+[]", TensorDesc(t, {3, 5, 7}), TensorDesc(t, Shape{}));
  add("rank0[]+[]", TensorDesc(t, Shape{}), TensorDesc(t, Shape{}));
  add("row[33,17]+[17]", TensorDesc(t, {33, 17}), TensorDesc(t, {17}));
  add("row[17]+[33,17]", TensorDesc(t, {17}), TensorDesc(t, {33, 17}));
  add("row[64,1000]+[1000]", TensorDesc(t, {64, 1000}), TensorDesc(t, {1000}));
  add("col[33,17]+[33,1]", TensorDesc(t, {33, 17}), TensorDesc(t, {33, 1}));
  add("col[33,1]+[33,17]", TensorDesc(t, {33, 1}), TensorDesc(t, {33, 17}));
  add("chan[2,16,5,7]+[1,16,1,1]", TensorDesc(t, {2, 16, 5, 7}), TensorDesc(t, {1, 16, 1, 1}));
  add("chan[1,16,1,1]+[2,16,5,7]", TensorDesc(t, {1, 16, 1, 1}), TensorDesc(t, {2, 16, 5, 7}));
  add("outer[33,1]+[1,17]", TensorDesc(t, {33, 1}), TensorDesc(t, {1, 17}));
  add("both[5,1,7]+[1,3,1]", TensorDesc(t, {5, 1, 7}), TensorDesc(t, {1, 3, 1}));
  add("mid[4,3,5]+[4,1,5]", TensorDesc(t, {4, 3, 5}), TensorDesc(t, {4, 1, 5}));
  add("rank5[2,1,3,1,5]+[3,4,1]", TensorDesc(t, {2, 1, 3, 1, 5}), TensorDesc(t, {3, 4, 1}));
  add("large[3,65537]+[65537]", TensorDesc(t, {3, 65537}), TensorDesc(t, {65537}));
  add("large[65537,3]+[65537,1]", TensorDesc(t, {65537, 3}), TensorDesc(t, {65537, 1}));
  add("empty[0,5]+[5]", TensorDesc(t, {0, 5}), TensorDesc(t, {5}));
  add("empty[2,0,3]+[1,1,3]", TensorDesc(t, {2, 0, 3}), TensorDesc(t, {1, 1, 3}));
  add("strided[33,17]^T+[17]", ops::transposed_desc(t, 33, 17), TensorDesc(t, {17}));
  add("strided[33,17]+[33,17]^T", TensorDesc(t, {33, 17}), ops::transposed_desc(t, 33, 17));
  add("strided[33,17]^T+[33,17]^T", ops::transposed_desc(t, 33, 17),
      ops::transposed_desc(t, 33, 17));
  // Integer operands (the reference kernel), whatever the float dtype t.
  cs.push_back({"i64[33,17]+[17]",
                {TensorDesc(DType::i64, {33, 17}), TensorDesc(DType::i64, {17})},
                {},
                {{-20, 20, true}, {1, 5, true}},
                1.0,
                true});
  cs.push_back({"i32[5,1,7]+[1,3,1]",
                {TensorDesc(DType::i32, {5, 1, 7}), TensorDesc(DType::i32, {1, 3, 1})},
                {},
                {{-20, 20, true}, {1, 3, true}},
                1.0,
                true});
  return cs;
}

void add_binary(Registry& r, const BinaryDef& d) {
  OpSchema s;
  s.name = d.name;
  s.family = "elementwise";
  s.doc =
      std::string(d.doc) +
      "; NumPy broadcasting; a and b have the same dtype (integer dtypes: the float64 reference "
      "kernel, exact below 2^53, saturating, division truncating)";
  s.inputs = {{"a", "first operand"}, {"b", "second operand, broadcast against a"}};
  s.outputs = {{"y", "broadcast shape of a and b, their dtype"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    // Integer operands (ONNX shape arithmetic, integer tensors) run on the
    // float64 reference kernel: exact below 2^53, saturating on overflow,
    // integer division truncating toward zero.
    if (!is_float(call.in(0).dtype))
      ops::require_dtype(
          call, 0,
          {DType::f32, DType::bf16, DType::f16, DType::i8, DType::u8, DType::i32, DType::i64});
    ops::require_same_dtype(call, 1, 0);
    return std::vector<TensorDesc>{TensorDesc(
        call.in(0).dtype, ops::broadcast_shapes(call, call.in(0).shape, call.in(1).shape))};
  };
  s.reference = [ref = d.ref](const OpCall&, const std::vector<RefTensor>& in,
                              std::vector<RefTensor>& out) {
    const Shape& os = out[0].shape;
    for (size_t o = 0; o < out[0].data.size(); ++o) {
      const int64_t io = static_cast<int64_t>(o);
      out[0].data[o] =
          ref(in[0].data[static_cast<size_t>(ops::broadcast_index(os, in[0].shape, io))],
              in[1].data[static_cast<size_t>(ops::broadcast_index(os, in[1].shape, io))]);
    }
  };
  s.cases = [ra = d.ra, rb = d.rb, name = std::string(d.name)](DType t) {
    std::vector<CheckCase> cs = binary_cases(t, ra, rb);
    if (name == "pow") {
      // Negative bases with integer exponents (sign rule), exponent 0 included.
      cs.push_back({"negbase[1000]",
                    {TensorDesc(t, {1000}), TensorDesc(t, {1000})},
                    {},
                    {{-3, 3}, {0, 3, true}}});
      cs.push_back({"negbase[33,17]+[17]",
                    {TensorDesc(t, {33, 17}), TensorDesc(t, {17})},
                    {},
                    {{-3, 3}, {0, 3, true}}});
    }
    return cs;
  };
  s.bench_case = [name = std::string(d.name)](const std::map<std::string, std::string>& kv,
                                              DType t) { return binary_bench_case(name, kv, t); };
  r.add_op(std::move(s));

  ops::add_isa_kernels(
      r, d.name,
      ops::PerIsa<binary::RunFn>{binary::run_avx512(), binary::run_avx2(), binary::run_scalar()},
      [kind = d.kind](binary::RunFn fn, Isa) {
        return [fn, kind](const OpCall& call, std::string* why) -> std::unique_ptr<KernelInstance> {
          if (!is_float(call.out(0).dtype)) {
            if (why) *why = "integer dtypes run on the reference kernel";
            return nullptr;
          }
          return std::make_unique<BinaryKernel>(call, kind, fn);
        };
      },
      std::string(d.name) + "_bcast_");
}

}  // namespace

void register_binary_ops(Registry& r) {
  for (const BinaryDef& d : binary_defs()) add_binary(r, d);
}

}  // namespace opsnn

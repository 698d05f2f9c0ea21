// Comparisons (equal, less, less_equal, greater, greater_equal) and logical
// ops (logical_and, logical_or, logical_xor, logical_not): NumPy broadcasting,
// bool outputs, as ONNX Equal/Less/.../And/Or/Xor/Not. Any comparison with a
// NaN is false (IEEE, as PyTorch). The kernel is the float64 reference
// (exact for every dtype but i64 beyond 2^53); they serve graphs' masks and
// shape logic, not hot loops.
#include <cmath>
#include <string>

#include "ops/builtin_ops.h"
#include "ops/common/checks.h"
#include "ops/elementwise/broadcast.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

const std::vector<DType> kAll(std::begin(kAllDTypes), std::end(kAllDTypes));

struct Def {
  const char* name;
  const char* doc;
  bool (*fn)(double, double);
  bool logical;  // bool operands only
};

std::vector<CheckCase> cases(DType t, int arity) {
  std::vector<CheckCase> cs;
  const bool b = t == DType::boolean;
  // Integer-valued draws make equality (and ties) happen.
  const ValueRange r = b ? ValueRange{0, 1, true} : ValueRange{-3, 3, true};
  auto add = [&](std::string name, std::vector<Shape> shapes) {
    CheckCase c;
    c.name = std::move(name);
    for (int i = 0; i < arity; ++i) {
      c.inputs.push_back(TensorDesc(t, shapes[static_cast<size_t>(i)]));
      c.ranges.push_back(r);
    }
    c.keep_dtypes = true;
    cs.push_back(std::move(c));
  };
  add("[0]", {{0}, {0}});
  add("[1]", {{1}, {1}});
  add("[33,17]", {{33, 17}, {33, 17}});
  add("[33,17]+[17]", {{33, 17}, {17}});
  add("[5,1,7]+[1,3,1]", {{5, 1, 7}, {1, 3, 1}});
  add("[]+[4]", {{}, {4}});
  return cs;
}

void add_binary(Registry& r, const Def& d) {
  OpSchema s;
  s.name = d.name;
  s.family = "elementwise";
  s.doc = std::string(d.doc) + "; NumPy broadcasting; bool output";
  s.inputs = {{"a", d.logical ? "bool" : "any dtype"}, {"b", "a's dtype, broadcast against a"}};
  s.outputs = {{"y", "bool, broadcast shape"}};
  s.dtypes = d.logical ? std::vector<DType>{DType::boolean} : kAll;
  s.infer = [logical = d.logical](const OpCall& call) {
    if (logical) ops::require_dtype(call, 0, {DType::boolean});
    ops::require_same_dtype(call, 1, 0);
    return std::vector<TensorDesc>{TensorDesc(
        DType::boolean, ops::broadcast_shapes(call, call.in(0).shape, call.in(1).shape))};
  };
  s.reference = [fn = d.fn](const OpCall&, const std::vector<RefTensor>& in,
                            std::vector<RefTensor>& out) {
    const Shape& os = out[0].shape;
    for (size_t o = 0; o < out[0].data.size(); ++o) {
      const auto io = static_cast<int64_t>(o);
      out[0].data[o] =
          fn(in[0].data[static_cast<size_t>(ops::broadcast_index(os, in[0].shape, io))],
             in[1].data[static_cast<size_t>(ops::broadcast_index(os, in[1].shape, io))])
              ? 1.0
              : 0.0;
    }
  };
  s.cases = [](DType t) { return cases(t, 2); };
  r.add_op(std::move(s));
}

}  // namespace

void register_compare_ops(Registry& r) {
  const Def defs[] = {
      {"equal", "a == b", [](double a, double b) { return a == b; }, false},
      {"less", "a < b", [](double a, double b) { return a < b; }, false},
      {"less_equal", "a <= b", [](double a, double b) { return a <= b; }, false},
      {"greater", "a > b", [](double a, double b) { return a > b; }, false},
      {"greater_equal", "a >= b", [](double a, double b) { return a >= b; }, false},
      {"logical_and", "a and b", [](double a, double b) { return a != 0 && b != 0; }, true},
      {"logical_or", "a or b", [](double a, double b) { return a != 0 || b != 0; }, true},
      {"logical_xor", "a xor b", [](double a, double b) { return (a != 0) != (b != 0); }, true},
  };
  for (const Def& d : defs) add_binary(r, d);

  OpSchema s;
  s.name = "logical_not";
  s.family = "elementwise";
  s.doc = "not x (bool)";
  s.inputs = {{"x", "bool"}};
  s.outputs = {{"y", "bool, x's shape"}};
  s.dtypes = {DType::boolean};
  s.infer = [](const OpCall& call) {
    ops::require_dtype(call, 0, {DType::boolean});
    return std::vector<TensorDesc>{TensorDesc(DType::boolean, call.in(0).shape)};
  };
  s.reference = [](const OpCall&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    for (size_t i = 0; i < out[0].data.size(); ++i) out[0].data[i] = in[0].data[i] != 0 ? 0.0 : 1.0;
  };
  s.cases = [](DType t) { return cases(t, 1); };
  r.add_op(std::move(s));
}

}  // namespace opsnn

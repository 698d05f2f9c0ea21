// range: start, start + delta, ... up to (not including) limit, as ONNX Range
// (numel = max(ceil((limit - start) / delta), 0)). No tensor inputs: its
// output is a constant, folded by the graph planner (exporters build
// position ids with it). The kernel is the float64 reference.
#include <cmath>
#include <string>

#include "ops/builtin_ops.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

int64_t range_count(const OpCall& c) {
  const double start = c.attrs.f("start"), limit = c.attrs.f("limit"), delta = c.attrs.f("delta");
  if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    c.fail("attributes 'start'/'limit'/'delta'", "finite values",
           std::to_string(start) + ", " + std::to_string(limit) + ", " + std::to_string(delta));
  if (delta == 0) c.fail("attribute 'delta'", "a non-zero step", "0");
  const double n = std::ceil((limit - start) / delta);
  if (n > double{int64_t{1} << 40})
    c.fail("attributes 'start'/'limit'/'delta'", "at most 2^40 elements", std::to_string(n));
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

CheckCase range_case(std::string name, double start, double limit, double delta, const char* t) {
  CheckCase c;
  c.name = std::move(name);
  c.attrs = {{"start", start}, {"limit", limit}, {"delta", delta}, {"dtype", std::string(t)}};
  c.keep_dtypes = true;
  return c;
}

}  // namespace

void register_range_op(Registry& r) {
  OpSchema s;
  s.name = "range";
  s.family = "index";
  s.doc =
      "start + i * delta for i in [0, max(ceil((limit - start) / delta), 0)) in dtype 'dtype' "
      "(ONNX Range with its three scalars as attributes)";
  s.outputs = {{"y", "1-D, dtype 'dtype'"}};
  s.attrs = {{"start", AttrType::f64, 0.0, "first value"},
             {"limit", AttrType::f64, std::nullopt, "exclusive bound"},
             {"delta", AttrType::f64, 1.0, "step (non-zero)"},
             {"dtype", AttrType::str, std::string("f32"), "output dtype name"}};
  s.dtypes.assign(std::begin(kAllDTypes), std::end(kAllDTypes));
  s.infer = [](const OpCall& c) {
    const DType t = dtype_from_name(c.attrs.s("dtype"));
    return std::vector<TensorDesc>{{t, {range_count(c)}}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>&, std::vector<RefTensor>& out) {
    const double start = c.attrs.f("start"), delta = c.attrs.f("delta");
    for (size_t i = 0; i < out[0].data.size(); ++i)
      out[0].data[i] = start + static_cast<double>(i) * delta;
  };
  s.cases = [](DType) {
    return std::vector<CheckCase>{
        range_case("0..5", 0, 5, 1, "i64"), range_case("10..4 step -3", 10, 4, -3, "i32"),
        range_case("empty", 3, 3, 1, "i64"), range_case("f32 1..2 step 0.25", 1, 2, 0.25, "f32")};
  };
  r.add_op(std::move(s));
}

}  // namespace opsnn

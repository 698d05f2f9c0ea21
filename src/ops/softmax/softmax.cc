// Schemas, float64 references, case tables and kernel registration of
// softmax and log_softmax.
#include "ops/softmax/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
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

struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};

Split split_at(const Shape& s, int64_t axis) {
  Split p;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d < axis) p.outer *= s[d];
    if (d == axis) p.n = s[d];
    if (d > axis) p.inner *= s[d];
  }
  return p;
}

int64_t axis_of(const OpCall& call) {
  return call.axis("attribute 'axis'", call.attrs.i("axis"), call.in(0).rank());
}

void reference(const OpCall& call, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
  const bool log = call.op() == "log_softmax";
  const Split p = split_at(in[0].shape, axis_of(call));
  const std::vector<double>& x = in[0].data;
  std::vector<double>& y = out[0].data;
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t c = 0; c < p.inner; ++c) {
      const int64_t base = o * p.n * p.inner + c;
      auto at = [&](int64_t a) { return static_cast<size_t>(base + a * p.inner); };
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t a = 0; a < p.n; ++a) mx = std::max(mx, x[at(a)]);
      double sum = 0;
      for (int64_t a = 0; a < p.n; ++a) sum += std::exp(x[at(a)] - mx);
      for (int64_t a = 0; a < p.n; ++a)
        y[at(a)] = log ? x[at(a)] - mx - std::log(sum) : std::exp(x[at(a)] - mx) / sum;
    }
}

std::vector<CheckCase> cases(DType t) {
  const ValueRange range{-8, 8};
  std::vector<CheckCase> cs;
  // Last axis: row lengths around the vector widths and large; rows 0, 1, many.
  for (int64_t cols : {1, 7, 15, 16, 17, 33, 768, 1000, 4099})
    for (int64_t rows : {0, 1, 5})
      cs.push_back({"[" + std::to_string(rows) + "," + std::to_string(cols) + "]",
                    {TensorDesc(t, {rows, cols})},
                    {},
                    {range}});
  cs.push_back({"[64,1000] (threads split rows)", {TensorDesc(t, {64, 1000})}, {}, {range}});
  cs.push_back({"[1]", {TensorDesc(t, {1})}, {}, {range}});
  cs.push_back({"[0]", {TensorDesc(t, {0})}, {}, {range}});
  cs.push_back({"[3,0] axis0", {TensorDesc(t, {3, 0})}, {{"axis", int64_t{0}}}, {range}});
  cs.push_back({"wide range [4,1000]", {TensorDesc(t, {4, 1000})}, {}, {ValueRange{-60, 60}}});
  // 16 MiB of f32 output: the non-temporal store path.
  if (t == DType::f32)
    cs.push_back({"[4096,1024] (streamed stores)", {TensorDesc(t, {4096, 1024})}, {}, {range}});
  // Other axes: vectorised across the inner dimension.
  cs.push_back({"[3,5,7] axis0", {TensorDesc(t, {3, 5, 7})}, {{"axis", int64_t{0}}}, {range}});
  cs.push_back({"[3,5,7] axis1", {TensorDesc(t, {3, 5, 7})}, {{"axis", int64_t{1}}}, {range}});
  cs.push_back({"[3,5,7] axis-2", {TensorDesc(t, {3, 5, 7})}, {{"axis", int64_t{-2}}}, {range}});
  cs.push_back(
      {"[2,33,100] axis1", {TensorDesc(t, {2, 33, 100})}, {{"axis", int64_t{1}}}, {range}});
  cs.push_back({"[1000,17] axis0", {TensorDesc(t, {1000, 17})}, {{"axis", int64_t{0}}}, {range}});
  cs.push_back({"[16,64,130] axis1 (threads split blocks)",
                {TensorDesc(t, {16, 64, 130})},
                {{"axis", int64_t{1}}},
                {range}});
  cs.push_back({"[7,1,9] axis1", {TensorDesc(t, {7, 1, 9})}, {{"axis", int64_t{1}}}, {range}});
  // Strided input (packed by the framework).
  cs.push_back({"strided[33,17]^T", {ops::transposed_desc(t, 33, 17)}, {}, {range}});
  cs.push_back({"strided[33,17]^T axis0",
                {ops::transposed_desc(t, 33, 17)},
                {{"axis", int64_t{0}}},
                {range}});
  return cs;
}

CheckCase bench_case(const std::string& op, const std::map<std::string, std::string>& kv, DType t) {
  ops::CaseKeys keys(op, kv);
  const int64_t rows = keys.i("rows", 16384), cols = keys.i("cols", 1024),
                axis = keys.i("axis", -1);
  keys.done();
  return {"bench", {TensorDesc(t, {rows, cols})}, {{"axis", axis}}, {ValueRange{-8, 8}}};
}

void add_op(Registry& r, const std::string& name, const std::string& doc) {
  OpSchema s;
  s.name = name;
  s.family = "softmax";
  s.doc = doc;
  s.inputs = {{"x", "input tensor"}};
  s.outputs = {{"y", "same shape and dtype as x"}};
  s.attrs = {
      {"axis", AttrType::i64, int64_t{-1}, "axis normalised over (negative counts from the end)"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    ops::require_float(call, 0);
    (void)axis_of(call);
    return std::vector<TensorDesc>{TensorDesc(call.in(0).dtype, call.in(0).shape)};
  };
  s.reference = reference;
  s.cases = cases;
  s.tolerance = [](DType t) {
    // Sums of up to a few thousand exp terms in f32 arithmetic.
    if (t == DType::f32) return Tolerance{1e-6, 2e-5};
    return default_tolerance(t);
  };
  s.bench_case = [name](const std::map<std::string, std::string>& kv, DType t) {
    return bench_case(name, kv, t);
  };
  s.cost = [](const OpCall& call, double* bytes, double* flops) {
    const double n = static_cast<double>(call.in(0).numel());
    *bytes = 2 * n * static_cast<double>(dtype_size(call.in(0).dtype));  // x read + y written
    *flops = 0;
  };
  r.add_op(std::move(s));

  const bool log = name == "log_softmax";
  ops::add_isa_kernels(r, name,
                       ops::PerIsa<softmax::RunFn>{softmax::run_avx512(), softmax::run_avx2(),
                                                   softmax::run_scalar()},
                       [log](softmax::RunFn fn, Isa) {
                         return simple_kernel(
                             [fn, log](const OpCall& call, const Tensor* in, Tensor* out, void*) {
                               const Split p = split_at(call.in(0).shape, axis_of(call));
                               fn(in[0].dtype(), in[0].data(), out[0].data(), p.outer, p.n, p.inner,
                                  log);
                             },
                             nullptr);
                       });
}

}  // namespace

void register_softmax_ops(Registry& r) {
  add_op(r, "softmax", "exp(x - max) / sum(exp(x - max)) along `axis` (numerically stable)");
  add_op(r, "log_softmax", "x - max - log(sum(exp(x - max))) along `axis` (numerically stable)");
}

}  // namespace opsnn

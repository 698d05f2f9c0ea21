// shape: the dims of x as an i64 vector (ONNX Shape-15, start/end). Its
// output depends on x's shape only, so the graph planner folds it at plan
// time; the kernel is the reference (a one-off call writes `rank` numbers).
#include <algorithm>
#include <limits>

#include "ops/builtin_ops.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

int64_t clamp_dim(int64_t i, int64_t rank) {
  return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank);
}

}  // namespace

void register_shape_of_op(Registry& r) {
  OpSchema s;
  s.name = "shape";
  s.family = "shape";
  s.doc =
      "The dims of x [start, end) as an i64 vector (ONNX Shape-15: negative start/end count from "
      "the end, both clamped to [0, rank]).";
  s.inputs = {{"x", "any dtype and shape (its data is not read)"}};
  s.outputs = {{"y", "i64 [max(end - start, 0)]"}};
  s.attrs = {{"start", AttrType::i64, int64_t{0}, "first dim"},
             {"end", AttrType::i64, std::numeric_limits<int64_t>::max(), "one past the last dim"}};
  s.dtypes.assign(std::begin(kAllDTypes), std::end(kAllDTypes));
  s.infer = [](const OpCall& c) {
    const int64_t rank = c.in(0).rank();
    const int64_t n = std::max<int64_t>(
        clamp_dim(c.attrs.i("end"), rank) - clamp_dim(c.attrs.i("start"), rank), 0);
    return std::vector<TensorDesc>{{DType::i64, {n}}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const auto rank = static_cast<int64_t>(in[0].shape.size());
    const int64_t start = clamp_dim(c.attrs.i("start"), rank);
    for (size_t i = 0; i < out[0].data.size(); ++i)
      out[0].data[i] = static_cast<double>(in[0].shape[start + static_cast<int64_t>(i)]);
  };
  s.cases = [](DType t) {
    auto c = [&](std::string name, Shape sh, Attrs a) {
      CheckCase k;
      k.name = std::move(name);
      k.inputs = {TensorDesc(t, std::move(sh))};
      k.attrs = std::move(a);
      return k;
    };
    return std::vector<CheckCase>{
        c("[]", {}, {}),
        c("[0,3]", {0, 3}, {}),
        c("[2,3,5]", {2, 3, 5}, {}),
        c("[2,3,5]start=1", {2, 3, 5}, {{"start", int64_t{1}}}),
        c("[2,3,5]start=-1", {2, 3, 5}, {{"start", int64_t{-1}}}),
        c("[2,3,5]end=-1", {2, 3, 5}, {{"end", int64_t{-1}}}),
        c("[2,3,5]start=2,end=1", {2, 3, 5}, {{"start", int64_t{2}}, {"end", int64_t{1}}}),
    };
  };
  r.add_op(std::move(s));
}

}  // namespace opsnn

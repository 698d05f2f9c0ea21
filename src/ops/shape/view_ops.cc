// squeeze, unsqueeze, flatten: the data of x unchanged under another shape
// (ONNX Squeeze-13, Unsqueeze-13, Flatten-13). The kernel is one memcpy; the
// graph planner runs them as views of their input's buffer.
#include <algorithm>
#include <cstring>

#include "ops/builtin_ops.h"
#include "ops/common/kernel_names.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

const std::vector<DType> kAll(std::begin(kAllDTypes), std::end(kAllDTypes));

Shape squeeze_shape(const OpCall& c) {
  const Shape& x = c.in(0).shape;
  const auto rank = static_cast<int64_t>(x.size());
  std::vector<bool> drop(x.size(), false);
  const std::vector<int64_t>& axes = c.attrs.ints("axes");
  if (axes.empty()) {
    for (size_t i = 0; i < x.size(); ++i) drop[i] = x[i] == 1;
  } else {
    for (int64_t a : axes) {
      // c.axis accepts 0 and -1 on a rank-0 tensor (softmax of a scalar);
      // a scalar has no axis to squeeze.
      if (rank == 0) c.fail("axes", "no axes for a rank-0 input", "axis " + std::to_string(a));
      const int64_t k = c.axis("axes", a, rank);
      if (drop[k]) c.fail("axes", "distinct axes", "axis " + std::to_string(a) + " twice");
      if (x[k] != 1)
        c.fail("input 'x' dim " + std::to_string(k), "1 (a squeezed axis)", std::to_string(x[k]));
      drop[k] = true;
    }
  }
  Shape o;
  for (size_t i = 0; i < x.size(); ++i)
    if (!drop[i]) o.push_back(x[i]);
  return o;
}

Shape unsqueeze_shape(const OpCall& c) {
  const Shape& x = c.in(0).shape;
  const std::vector<int64_t>& axes = c.attrs.ints("axes");
  const auto rank = static_cast<int64_t>(x.size() + axes.size());
  std::vector<bool> add(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    const int64_t k = c.axis("axes", a, rank);
    if (add[k]) c.fail("axes", "distinct axes", "axis " + std::to_string(a) + " twice");
    add[k] = true;
  }
  Shape o;
  size_t j = 0;
  for (int64_t i = 0; i < rank; ++i) o.push_back(add[i] ? 1 : x[j++]);
  return o;
}

Shape flatten_shape(const OpCall& c) {
  const Shape& x = c.in(0).shape;
  const auto rank = static_cast<int64_t>(x.size());
  int64_t axis = c.attrs.i("axis");
  if (axis < -rank || axis > rank)
    c.fail("axis", "in [" + std::to_string(-rank) + ", " + std::to_string(rank) + "]",
           std::to_string(axis));
  if (axis < 0) axis += rank;
  Shape head(x.begin(), x.begin() + axis), tail(x.begin() + axis, x.end());
  return {shape_numel(head), shape_numel(tail)};
}

void copy_kernel(const OpCall&, const Tensor* in, Tensor* out, void*) {
  if (out[0].nbytes()) std::memcpy(out[0].data(), in[0].data(), out[0].nbytes());
}

void add_view_op(Registry& r, const char* name, const char* doc, std::vector<AttrSpec> attrs,
                 Shape (*shape_fn)(const OpCall&), std::vector<CheckCase> (*cases)(DType)) {
  OpSchema s;
  s.name = name;
  s.family = "shape";
  s.doc = doc;
  s.inputs = {{"x", "any dtype"}};
  s.outputs = {{"y", "x's data and dtype under the new shape"}};
  s.attrs = std::move(attrs);
  s.dtypes = kAll;
  s.infer = [shape_fn](const OpCall& c) {
    return std::vector<TensorDesc>{{c.in(0).dtype, shape_fn(c)}};
  };
  s.reference = [](const OpCall&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    out[0].data = in[0].data;
  };
  s.cases = cases;
  r.add_op(std::move(s));
  KernelDesc k;
  k.name = ops::kernel_name(name, "memcpy", k.isa);
  k.dtypes = kAll;
  k.priority = ops::isa_priority(k.isa);
  k.create = simple_kernel(copy_kernel, nullptr);
  r.add_kernel(name, std::move(k));
}

CheckCase view_case(std::string name, TensorDesc x, Attrs a) {
  CheckCase c;
  c.name = std::move(name);
  c.inputs = {std::move(x)};
  c.attrs = std::move(a);
  return c;
}

using V = std::vector<int64_t>;

}  // namespace

void register_view_ops(Registry& r) {
  add_view_op(
      r, "squeeze",
      "Removes the listed size-1 axes of x (every size-1 axis when 'axes' is empty), as ONNX "
      "Squeeze; a listed axis whose size is not 1 is an error",
      {{"axes", AttrType::i64s, V{}, "axes to remove (negative from the end)"}}, squeeze_shape,
      [](DType t) {
        return std::vector<CheckCase>{
            view_case("[1,3,1,5]all", TensorDesc(t, {1, 3, 1, 5}), {}),
            view_case("[1,3,1,5]axes=-2", TensorDesc(t, {1, 3, 1, 5}), {{"axes", V{-2}}}),
            view_case("[1]->[]", TensorDesc(t, {1}), {{"axes", V{0}}}),
            view_case("[0,1]", TensorDesc(t, {0, 1}), {{"axes", V{1}}})};
      });
  add_view_op(r, "unsqueeze",
              "Inserts size-1 axes at the listed positions of the output (ONNX Unsqueeze-13)",
              {{"axes", AttrType::i64s, std::nullopt, "output positions of the new axes"}},
              unsqueeze_shape, [](DType t) {
                return std::vector<CheckCase>{
                    view_case("[]->[1]", TensorDesc(t, Shape{}), {{"axes", V{0}}}),
                    view_case("[3,5]axes=0,-1", TensorDesc(t, {3, 5}), {{"axes", V{0, -1}}}),
                    view_case("[3,5]axes=1,2", TensorDesc(t, {3, 5}), {{"axes", V{1, 2}}})};
              });
  add_view_op(
      r, "flatten",
      "x as 2-D [prod(dims[:axis]), prod(dims[axis:])] (ONNX Flatten-13; axis in [-rank, rank])",
      {{"axis", AttrType::i64, int64_t{1}, "first dim of the second output dim"}}, flatten_shape,
      [](DType t) {
        return std::vector<CheckCase>{
            view_case("[2,3,5]axis=0", TensorDesc(t, {2, 3, 5}), {{"axis", int64_t{0}}}),
            view_case("[2,3,5]axis=2", TensorDesc(t, {2, 3, 5}), {{"axis", int64_t{2}}}),
            view_case("[2,3,5]axis=-3", TensorDesc(t, {2, 3, 5}), {{"axis", int64_t{-3}}}),
            view_case("[2,3,5]axis=3", TensorDesc(t, {2, 3, 5}), {{"axis", int64_t{3}}})};
      });
}

}  // namespace opsnn

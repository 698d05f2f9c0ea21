// The expand op: schema, shape inference, float64 reference, case
// table and kernels (through the strided-copy engine, kernels/copy.h).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/common/rank_array.h"
#include "ops/shape/kernels/copy.h"
#include "ops/shape/move_ops.h"
#include "ops/shape/shape_util.h"
#include "opsnn/error.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

using namespace shape;  // the shape family's helpers (shape_util.h)

// ---- expand ---------------------------------------------------------------------
Shape expand_shape(const OpCall& c) {
  const Shape& a = c.in(0).shape;
  const Shape& b = c.attrs.ints("shape");
  const size_t r = std::max(a.size(), b.size());
  Shape o(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    const int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (db < 0) c.fail("attribute 'shape'", "dims >= 0", shape_str(b));
    if (da != db && da != 1 && db != 1)
      c.fail("attribute 'shape'", "a shape that input " + shape_str(a) + " broadcasts to",
             shape_str(b));
    o[k] = da == 1 ? db : da;
  }
  return o;
}

void expand_kernel(const OpCall&, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  const Shape &is = in[0].shape(), &os = out[0].shape();
  ops::RankArray<int64_t> st(os.size());  // in's strides broadcast to out's shape
  const size_t off = os.size() - is.size();
  for (size_t k = 0; k < off; ++k) st[k] = 0;
  for (size_t k = 0; k < is.size(); ++k)
    st[k + off] = is[k] == 1 && os[k + off] != 1 ? 0 : in[0].strides()[k];
  copy_view(in[0], in[0].data(), os, {st.data(), st.size()}, out[0].data(), tiles);
}

}  // namespace

void add_expand(Registry& r) {
  OpSchema s;
  s.name = "expand";
  s.family = "shape";
  s.doc =
      "Broadcasts x to 'shape' with NumPy rules (as ONNX Expand: output = broadcast(x.shape, "
      "shape)).";
  s.inputs = {{"x", "any dtype, any strides"}};
  s.outputs = {{"y", "contiguous"}};
  s.attrs = {{"shape", AttrType::i64s, std::nullopt, "target shape"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) {
    return std::vector<TensorDesc>{{c.in(0).dtype, expand_shape(c)}};
  };
  s.reference = [](const OpCall&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const Shape& is = in[0].shape;
    const size_t off = out[0].shape.size() - is.size();
    std::vector<int64_t> src(is.size());
    for_each_index(out[0].shape, [&](const std::vector<int64_t>& idx, int64_t f) {
      for (size_t k = 0; k < is.size(); ++k) src[k] = is[k] == 1 ? 0 : idx[k + off];
      out[0].data[static_cast<size_t>(f)] =
          in[0].data[static_cast<size_t>(shape::flat_index(src, is))];
    });
  };
  s.cases = [](DType t) {
    using V = std::vector<int64_t>;
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc d, V sh) {
      cs.push_back(cc(name, {d}, {{"shape", sh}}));
    };
    add("[1]->[0]", TensorDesc(t, {1}), {0});
    add("[1]->[1]", TensorDesc(t, {1}), {1});
    add("[1]->[17]", TensorDesc(t, {1}), {17});
    add("[3,1]->[3,33]", TensorDesc(t, {3, 1}), {3, 33});
    add("[5]->[4,5]", TensorDesc(t, {5}), {4, 5});
    add("[2,1,7]->[2,3,1]", TensorDesc(t, {2, 1, 7}), {2, 3, 1});
    add("[1,17,1]->[2,3,17,5]", TensorDesc(t, {1, 17, 1}), {2, 3, 17, 5});
    add("[257]->[300,1]", TensorDesc(t, {257}), {300, 1});
    add("strided[33,17]^T->[2,33,17]", ops::transposed_desc(t, 33, 17), {2, 1, 1});
    return cs;
  };
  s.bench_case = [name = s.name](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema(name), kv, t);
  };
  r.add_op(std::move(s));
  add_move_kernels(r, "expand", expand_kernel);
}

}  // namespace opsnn

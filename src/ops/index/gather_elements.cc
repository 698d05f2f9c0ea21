// gather_elements (ONNX GatherElements): y[i] = x[i with axis replaced by
// indices[i]]; indices has x's rank and y its shape. Any dtype (bytes are
// copied). An index outside [-dim, dim) raises opsnn::Error before anything
// is written.
#include <cstring>
#include <string>
#include <vector>

#include "ops/builtin_ops.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/common/kernel_names.h"
#include "ops/shape/shape_util.h"
#include "opsnn/error.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

int64_t index_at(const Tensor& idx, int64_t i) {
  return idx.dtype() == DType::i64 ? idx.data_as<int64_t>()[i] : idx.data_as<int32_t>()[i];
}

[[noreturn]] void bad_index(const OpCall& c, int64_t v, int64_t n, int64_t at) {
  c.fail(ops::input_name(c, 1),
         "indices in [" + std::to_string(-n) + ", " + std::to_string(n) + ")",
         std::to_string(v) + " at flat position " + std::to_string(at));
}

// The output viewed as [outer, m, inner] around the axis (m: the indices'
// extent there), x as [outer_x, n, inner_x] with the same outer/inner ranks.
void gather_elements_kernel(const OpCall& c, const Tensor* in, Tensor* out, void*) {
  const Shape& xs = c.in(0).shape;
  const Shape& is = c.in(1).shape;
  const int64_t total = out[0].numel();
  if (total == 0) return;
  const auto ax =
      static_cast<size_t>(c.axis("attribute 'axis'", c.attrs.i("axis"), c.in(0).rank()));
  const int64_t n = xs[ax];
  for (int64_t i = 0; i < total; ++i) {
    const int64_t v = index_at(in[1], i);
    if (v < -n || v >= n) bad_index(c, v, n, i);
  }
  const auto es = static_cast<int64_t>(dtype_size(c.in(0).dtype));
  const auto rank = static_cast<int64_t>(xs.size());
  const char* x = static_cast<const char*>(in[0].data());
  char* y = static_cast<char*>(out[0].data());
  const int64_t xstride_ax = shape::prod(xs, ax + 1, xs.size());
  parallel_for(total, 4096, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      // x offset of the output's multi-index with the axis coordinate replaced.
      int64_t rem = o, off = 0, stride = 1;
      for (int64_t k = rank - 1; k >= 0; --k) {
        const auto ku = static_cast<size_t>(k);
        const int64_t ck = rem % is[ku];
        rem /= is[ku];
        if (ku != ax) off += ck * stride;
        stride *= xs[ku];
      }
      int64_t v = index_at(in[1], o);
      if (v < 0) v += n;
      std::memcpy(y + o * es, x + (off + v * xstride_ax) * es, static_cast<size_t>(es));
    }
  });
}

}  // namespace

void register_gather_elements_op(Registry& r) {
  OpSchema s;
  s.name = "gather_elements";
  s.family = "shape";
  s.doc =
      "y[i] = x[i with axis replaced by indices[i]] (ONNX GatherElements); indices may be "
      "negative; out of range raises at run time";
  s.inputs = {{"x", "any dtype"},
              {"indices", "i64 or i32, x's rank, each dim <= x's off the axis"}};
  s.outputs = {{"y", "indices' shape, x's dtype"}};
  s.attrs = {{"axis", AttrType::i64, int64_t{0}, "axis of x to index (negative from the end)"}};
  s.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  s.infer = [](const OpCall& c) {
    ops::require_dtype(c, 1, {DType::i64, DType::i32});
    const Shape& xs = c.in(0).shape;
    const Shape& is = c.in(1).shape;
    if (xs.empty()) c.fail("input 'x'", "rank >= 1", "rank 0");
    if (is.size() != xs.size())
      c.fail("input 'indices'", "rank " + std::to_string(xs.size()) + " (x's)", shape_str(is));
    const auto ax =
        static_cast<size_t>(c.axis("attribute 'axis'", c.attrs.i("axis"), c.in(0).rank()));
    for (size_t k = 0; k < xs.size(); ++k)
      if (k != ax && is[k] > xs[k])
        c.fail("input 'indices'", "dims <= x's off the axis (" + shape_str(xs) + ")",
               shape_str(is));
    if (xs[ax] == 0 && c.in(1).numel() > 0)
      c.fail("input 'x'", "a non-empty axis to gather from", shape_str(xs));
    return std::vector<TensorDesc>{{c.in(0).dtype, is}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const Shape& xs = in[0].shape;
    const auto ax = static_cast<size_t>(c.axis("axis", c.attrs.i("axis"), c.in(0).rank()));
    const int64_t n = xs[ax];
    shape::for_each_index(in[1].shape, [&](const std::vector<int64_t>& idx, int64_t flat) {
      auto v = static_cast<int64_t>(in[1].data[static_cast<size_t>(flat)]);
      if (v < -n || v >= n) bad_index(c, v, n, flat);
      std::vector<int64_t> src = idx;
      src[ax] = v < 0 ? v + n : v;
      out[0].data[static_cast<size_t>(flat)] =
          in[0].data[static_cast<size_t>(shape::flat_index(src, xs))];
    });
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc x, TensorDesc idx, int64_t axis, ValueRange ir) {
      cs.push_back({std::move(name), {std::move(x), std::move(idx)}, {{"axis", axis}}, {{}, ir}});
    };
    add("[5]idx[3]", TensorDesc(t, {5}), TensorDesc(DType::i64, {3}), 0, {-5, 4, true});
    add("[3,4]ax0 idx[2,4]", TensorDesc(t, {3, 4}), TensorDesc(DType::i64, {2, 4}), 0,
        {-3, 2, true});
    add("[3,4]ax1 idx[3,7]", TensorDesc(t, {3, 4}), TensorDesc(DType::i32, {3, 7}), 1,
        {-4, 3, true});
    add("[4,33,5]ax-2 idx[2,40,3]", TensorDesc(t, {4, 33, 5}), TensorDesc(DType::i64, {2, 40, 3}),
        -2, {-33, 32, true});
    add("[64,1000]ax1 idx[64,300]", TensorDesc(t, {64, 1000}), TensorDesc(DType::i64, {64, 300}), 1,
        {0, 999, true});
    add("empty idx[0,4]", TensorDesc(t, {3, 4}), TensorDesc(DType::i64, {0, 4}), 0, {0, 2, true});
    add("strided[33,17]^T ax1", ops::transposed_desc(t, 33, 17), TensorDesc(DType::i64, {33, 5}), 1,
        {-17, 16, true});
    return cs;
  };
  r.add_op(std::move(s));
  KernelDesc k;
  k.name = ops::kernel_name("gather_elements", "copy", k.isa);
  k.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  k.priority = ops::isa_priority(k.isa);
  k.create = simple_kernel(gather_elements_kernel, nullptr);
  r.add_kernel("gather_elements", std::move(k));
}

}  // namespace opsnn

// tile (ONNX Tile): x repeated `repeats[k]` times along each axis k. Any
// dtype: the kernel copies bytes, one innermost row at a time.
#include <cstring>
#include <string>
#include <vector>

#include "ops/builtin_ops.h"
#include "ops/common/cases.h"
#include "ops/common/kernel_names.h"
#include "ops/shape/shape_util.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

constexpr int64_t kMaxRank = 16;  // the kernel's multi-index lives on the stack

void tile_kernel(const OpCall& c, const Tensor* in, Tensor* out, void*) {
  const Shape& xs = c.in(0).shape;
  const Shape& ys = c.out(0).shape;
  const int64_t n = out[0].numel();
  if (n == 0) return;
  const auto rank = static_cast<int64_t>(xs.size());
  const int64_t es = static_cast<int64_t>(dtype_size(c.in(0).dtype));
  const char* x = static_cast<const char*>(in[0].data());
  char* y = static_cast<char*>(out[0].data());
  const int64_t xrow = rank ? xs.back() : 1, yrow = rank ? ys.back() : 1;
  const int64_t rows = n / yrow;
  parallel_for(rows, std::max<int64_t>(1, 16384 / (yrow * es)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      // Source row: each output index (all but the last) modulo the input dim.
      int64_t rem = r, src = 0, stride = xrow;
      for (int64_t k = rank - 2; k >= 0; --k) {
        const auto ku = static_cast<size_t>(k);
        src += (rem % ys[ku]) % xs[ku] * stride;
        rem /= ys[ku];
        stride *= xs[ku];
      }
      char* dst = y + r * yrow * es;
      for (int64_t j = 0; j < yrow; j += xrow)
        std::memcpy(dst + j * es, x + src * es, static_cast<size_t>(xrow * es));
    }
  });
}

}  // namespace

void register_tile_op(Registry& r) {
  OpSchema s;
  s.name = "tile";
  s.family = "shape";
  s.doc = "x repeated repeats[k] times along each axis k (ONNX Tile); any dtype";
  s.inputs = {{"x", "any dtype, rank <= 16"}};
  s.outputs = {{"y", "x.shape[k] * repeats[k], x's dtype"}};
  s.attrs = {{"repeats", AttrType::i64s, std::nullopt, "one count >= 0 per axis of x"}};
  s.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  s.infer = [](const OpCall& c) {
    const std::vector<int64_t>& rep = c.attrs.ints("repeats");
    const Shape& xs = c.in(0).shape;
    if (rep.size() != xs.size())
      c.fail("attribute 'repeats'", std::to_string(xs.size()) + " values (the rank of x)",
             std::to_string(rep.size()) + " values");
    if (c.in(0).rank() > kMaxRank)
      c.fail("input 'x'", "rank <= " + std::to_string(kMaxRank), std::to_string(c.in(0).rank()));
    Shape ys;
    for (size_t k = 0; k < xs.size(); ++k) {
      if (rep[k] < 0) c.fail("attribute 'repeats'", "values >= 0", std::to_string(rep[k]));
      ys.push_back(c.checked_mul("output shape", xs[k], rep[k]));
    }
    return std::vector<TensorDesc>{{c.in(0).dtype, ys}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const Shape& xs = in[0].shape;
    shape::for_each_index(out[0].shape, [&](const std::vector<int64_t>& idx, int64_t flat) {
      int64_t src = 0;
      for (size_t k = 0; k < xs.size(); ++k) src = src * xs[k] + idx[k] % xs[k];
      out[0].data[static_cast<size_t>(flat)] = in[0].data[static_cast<size_t>(src)];
    });
    (void)c;
  };
  s.cases = [](DType t) {
    using V = std::vector<int64_t>;
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc x, V rep) {
      cs.push_back({std::move(name), {std::move(x)}, {{"repeats", std::move(rep)}}, {}});
    };
    add("[5]x3", TensorDesc(t, {5}), {3});
    add("[]", TensorDesc(t, Shape{}), {});
    add("[2,3]x(2,2)", TensorDesc(t, {2, 3}), {2, 2});
    add("[3,1,7]x(1,5,2)", TensorDesc(t, {3, 1, 7}), {1, 5, 2});
    add("[2,3,4,5]x(2,1,3,1)", TensorDesc(t, {2, 3, 4, 5}), {2, 1, 3, 1});
    add("[33,17]x(3,1)", TensorDesc(t, {33, 17}), {3, 1});
    add("[4,1000]x(1,9)", TensorDesc(t, {4, 1000}), {1, 9});
    add("zero repeat [3,4]x(0,2)", TensorDesc(t, {3, 4}), {0, 2});
    add("empty [0,4]x(3,2)", TensorDesc(t, {0, 4}), {3, 2});
    add("strided[33,17]^T x(2,2)", ops::transposed_desc(t, 33, 17), {2, 2});
    return cs;
  };
  r.add_op(std::move(s));
  KernelDesc k;
  k.name = ops::kernel_name("tile", "copy", k.isa);
  k.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  k.priority = ops::isa_priority(k.isa);
  k.create = simple_kernel(tile_kernel, nullptr);
  r.add_kernel("tile", std::move(k));
}

}  // namespace opsnn

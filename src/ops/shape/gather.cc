// The gather and embedding ops: schema, shape inference, float64 reference, case
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
#include "ops/shape/kernels/copy.h"
#include "ops/shape/move_ops.h"
#include "ops/shape/shape_util.h"
#include "opsnn/error.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

using namespace shape;  // the shape family's helpers (shape_util.h)

// ---- gather / embedding -------------------------------------------------------
int64_t index_at(const Tensor& idx, int64_t i) {
  return idx.dtype() == DType::i64 ? idx.data_as<int64_t>()[i] : idx.data_as<int32_t>()[i];
}

// out[o, j, i] = data[o, idx[j], i]; data and indices contiguous.
void gather_rows(const OpCall& c, const Tensor& data, const Tensor& idx, Tensor& out, int64_t axis,
                 bool allow_negative) {
  const int64_t n = data.shape()[static_cast<size_t>(axis)];
  const int64_t outer = prod(data.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = prod(data.shape(), static_cast<size_t>(axis) + 1, data.shape().size());
  const int64_t J = idx.numel();
  const int64_t es = static_cast<int64_t>(dtype_size(data.dtype()));
  for (int64_t j = 0; j < J; ++j) {
    const int64_t v = index_at(idx, j);
    if (v >= n || v < (allow_negative ? -n : 0))
      c.fail(
          ops::input_name(c, 1),
          "indices in [" + std::to_string(allow_negative ? -n : 0) + ", " + std::to_string(n) + ")",
          std::to_string(v) + " at flat position " + std::to_string(j));
  }
  const int64_t row = inner * es;
  const char* src = static_cast<const char*>(data.data());
  char* dst = static_cast<char*>(out.data());
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, row));
  parallel_for(outer * J, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / J, j = t % J;
      int64_t v = index_at(idx, j);
      if (v < 0) v += n;
      std::memcpy(dst + t * row, src + (o * n + v) * row, static_cast<size_t>(row));
    }
  });
}

void gather_kernel(const OpCall& c, const Tensor* in, Tensor* out, const TileKernels&) {
  if (out[0].numel() == 0 && in[1].numel() == 0) return;
  gather_rows(c, in[0], in[1], out[0], c.axis("axis", c.attrs.i("axis"), in[0].rank()), true);
}

void embedding_kernel(const OpCall& c, const Tensor* in, Tensor* out, const TileKernels&) {
  gather_rows(c, in[0], in[1], out[0], 0, false);
}

void gather_ref(const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out,
                int64_t axis, bool allow_negative) {
  const Shape& ds = in[0].shape;
  const int64_t n = ds[static_cast<size_t>(axis)];
  for (size_t j = 0; j < in[1].data.size(); ++j) {
    const double v = in[1].data[j];
    if (v >= static_cast<double>(n) || v < (allow_negative ? -static_cast<double>(n) : 0.0))
      c.fail(
          ops::input_name(c, 1),
          "indices in [" + std::to_string(allow_negative ? -n : 0) + ", " + std::to_string(n) + ")",
          std::to_string(static_cast<int64_t>(v)) + " at flat position " + std::to_string(j));
  }
  const int64_t outer = prod(ds, 0, static_cast<size_t>(axis));
  const int64_t inner = prod(ds, static_cast<size_t>(axis) + 1, ds.size());
  const int64_t J = static_cast<int64_t>(in[1].data.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < J; ++j) {
      int64_t v = static_cast<int64_t>(in[1].data[static_cast<size_t>(j)]);
      if (v < 0) v += n;
      for (int64_t i = 0; i < inner; ++i)
        out[0].data[static_cast<size_t>((o * J + j) * inner + i)] =
            in[0].data[static_cast<size_t>((o * n + v) * inner + i)];
    }
}

// gather / embedding: output written + indices read + the rows read.
void gather_cost(const OpCall& call, double* bytes, double* flops) {
  const TensorDesc& y = call.outputs.at(0);
  const TensorDesc& idx = call.in(1);
  *bytes = 2.0 * static_cast<double>(y.numel()) * static_cast<double>(dtype_size(y.dtype)) +
           static_cast<double>(idx.numel()) * static_cast<double>(dtype_size(idx.dtype));
  *flops = 0;
}

}  // namespace

void add_gather(Registry& r) {
  OpSchema s;
  s.name = "gather";
  s.family = "shape";
  s.doc =
      "y = x taken at 'indices' along 'axis' (ONNX Gather): shape x[:axis] + indices + x[axis+1:]. "
      "Indices may be negative (counted from the end); an index outside [-dim, dim) is an error "
      "raised at run time (opsnn::Error naming input 'indices'), before anything is written.";
  s.inputs = {{"x", "any dtype"}, {"indices", "i64 or i32, any shape"}};
  s.outputs = {{"y", "x's dtype"}};
  s.attrs = {
      {"axis", AttrType::i64, int64_t{0}, "axis of x to index (negative counts from the end)"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) {
    ops::require_dtype(c, 1, {DType::i64, DType::i32});
    if (c.in(0).rank() == 0) c.fail("input 'x'", "rank >= 1", "rank 0");
    const size_t ax =
        static_cast<size_t>(c.axis("attribute 'axis'", c.attrs.i("axis"), c.in(0).rank()));
    const Shape& ds = c.in(0).shape;
    if (ds[ax] == 0 && c.in(1).numel() > 0)
      c.fail("input 'x'", "a non-empty axis " + std::to_string(ax) + " to gather from",
             shape_str(ds));
    Shape o(ds.begin(), ds.begin() + static_cast<long>(ax));
    o.insert(o.end(), c.in(1).shape.begin(), c.in(1).shape.end());
    o.insert(o.end(), ds.begin() + static_cast<long>(ax) + 1, ds.end());
    return std::vector<TensorDesc>{{c.in(0).dtype, o}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    gather_ref(c, in, out, c.axis("axis", c.attrs.i("axis"), c.in(0).rank()), true);
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, Shape ds, TensorDesc idx, int64_t axis, ValueRange ir,
                   TensorDesc data = {}) {
      cs.push_back(cc(name, {data.shape.empty() ? TensorDesc(t, ds) : data, idx}, {{"axis", axis}},
                      {{}, ir}));
    };
    add("[5]idx[0]", {5}, TensorDesc(DType::i64, {0}), 0, {0, 4, true});
    add("[1]idx[1]", {1}, TensorDesc(DType::i64, {1}), 0, {-1, 0, true});
    add("[17]idx[7]neg", {17}, TensorDesc(DType::i64, {7}), 0, {-17, 16, true});
    add("[33,5]idx[3,4]", {33, 5}, TensorDesc(DType::i32, {3, 4}), 0, {-33, 32, true});
    add("[4,33,5]ax1", {4, 33, 5}, TensorDesc(DType::i64, {9}), 1, {-33, 32, true});
    add("[4,33,5]ax-1", {4, 33, 5}, TensorDesc(DType::i64, {2, 3}), -1, {-5, 4, true});
    add("[4,33,5]idx[]", {4, 33, 5}, TensorDesc(DType::i64, {}), 2, {0, 4, true});
    add("[1000,129]idx[300]", {1000, 129}, TensorDesc(DType::i64, {300}), 0, {-1000, 999, true});
    add("strided[33,17]^Tax1", {}, TensorDesc(DType::i64, {5}), 1, {-17, 16, true},
        ops::transposed_desc(t, 33, 17));
    return cs;
  };
  // bench: x=AxB, idx=N indices, axis.
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    ops::CaseKeys keys("gather", kv);
    const int64_t n = keys.i("idx", 1024);
    CheckCase c = ops::attr_bench_case(Registry::global().schema("gather"), keys, t);
    keys.done();
    const int64_t axis = c.attrs.has("axis") ? c.attrs.i("axis") : 0;
    const Shape& xs = c.inputs[0].shape;
    const int64_t dim =
        xs[static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(xs.size()) : axis)];
    c.inputs[1] = TensorDesc(DType::i64, {n});
    c.ranges = {{}, {0, static_cast<double>(dim - 1), true}};
    return c;
  };
  // Bytes moved: the output written, the indices read and the selected
  // slices read (as many bytes as the output; the rest of x is never touched).
  s.cost = gather_cost;
  r.add_op(std::move(s));
  add_move_kernels(r, "gather", gather_kernel, true);
}

void add_embedding(Registry& r) {
  OpSchema s;
  s.name = "embedding";
  s.family = "shape";
  s.doc =
      "Looks up rows of 'table' [V, D] at 'ids' (any shape) -> [..., D]. Ids must be in [0, V); "
      "any other id is an error raised at run time (input 'ids'), before anything is written.";
  s.inputs = {{"table", "[V, D]"}, {"ids", "i64 or i32, any shape"}};
  s.outputs = {{"y", "ids.shape + [D], table's dtype"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& c) {
    ops::require_rank(c, 0, 2);
    ops::require_dtype(c, 0, {DType::f32, DType::bf16, DType::f16});  // as s.dtypes lists
    ops::require_dtype(c, 1, {DType::i64, DType::i32});
    if (c.in(0).shape[0] == 0 && c.in(1).numel() > 0)
      c.fail("input 'table'", "at least one row to look up", shape_str(c.in(0).shape));
    Shape o = c.in(1).shape;
    o.push_back(c.in(0).shape[1]);
    return std::vector<TensorDesc>{{c.in(0).dtype, o}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    gather_ref(c, in, out, 0, false);
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, Shape ts, TensorDesc ids) {
      cs.push_back(
          cc(name, {TensorDesc(t, ts), ids}, {}, {{}, {0, static_cast<double>(ts[0] - 1), true}}));
    };
    add("[5,0]ids[3]", {5, 0}, TensorDesc(DType::i64, {3}));
    add("[7,1]ids[0]", {7, 1}, TensorDesc(DType::i64, {0}));
    add("[1,17]ids[2,3]", {1, 17}, TensorDesc(DType::i32, {2, 3}));
    add("[100,33]ids[2,7]", {100, 33}, TensorDesc(DType::i64, {2, 7}));
    add("[1000,768]ids[4,17]", {1000, 768}, TensorDesc(DType::i64, {4, 17}));
    return cs;
  };
  // bench: v=rows, d=width, ids=N.
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    ops::CaseKeys keys("embedding", kv);
    const int64_t V = keys.i("v", 32000), D = keys.i("d", 4096), n = keys.i("ids", 512);
    keys.done();
    CheckCase c;
    c.name = "bench";
    c.inputs = {TensorDesc(t, {V, D}), TensorDesc(DType::i64, {n})};
    c.ranges = {{}, {0, static_cast<double>(V - 1), true}};
    return c;
  };
  // Bytes moved: the output written, the indices read and the selected
  // slices read (as many bytes as the output; the rest of x is never touched).
  s.cost = gather_cost;
  r.add_op(std::move(s));
  add_move_kernels(r, "embedding", embedding_kernel, true);
}

}  // namespace opsnn

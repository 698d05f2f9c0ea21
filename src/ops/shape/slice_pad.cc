// The slice and pad ops: schema, shape inference, float64 reference, case
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

// ---- slice --------------------------------------------------------------------
void slice_kernel(const OpCall& call, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  if (out[0].numel() == 0) return;
  ops::RankArray<shape::SliceDim> p;
  shape::slice_params(call, p);
  int64_t off = 0;
  ops::RankArray<int64_t> st(p.size());
  for (size_t k = 0; k < p.size(); ++k) {
    off += p[k].start * in[0].strides()[k];
    st[k] = p[k].len > 1 ? p[k].step * in[0].strides()[k] : 0;
  }
  copy_view(in[0], byte_ptr(in[0], off), out[0].shape(), {st.data(), st.size()}, out[0].data(),
            tiles);
}

// ---- pad ------------------------------------------------------------------------
enum class PadMode { constant, reflect, edge };
PadMode pad_mode(const OpCall& c) {
  const std::string& m = c.attrs.s("mode");
  if (m == "constant") return PadMode::constant;
  if (m == "reflect") return PadMode::reflect;
  if (m == "edge") return PadMode::edge;
  c.fail("attribute 'mode'", "constant|reflect|edge", "'" + m + "'");
}

Shape pad_shape(const OpCall& c) {
  const Shape& in = c.in(0).shape;
  const size_t rank = in.size();
  const auto& pads = c.attrs.ints("pads");
  if (pads.size() != 2 * rank)
    c.fail("attribute 'pads'", std::to_string(2 * rank) + " values (2 x rank, ONNX order)",
           std::to_string(pads.size()));
  const PadMode mode = pad_mode(c);
  Shape o(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t b = pads[k], e = pads[k + rank];
    if (b < 0 || e < 0) c.fail("attribute 'pads'", "values >= 0", shape_str(pads));
    if (mode == PadMode::reflect && (b > in[k] - 1 || e > in[k] - 1) && (b || e))
      c.fail("attribute 'pads'",
             "reflect pads <= dim - 1 = " + std::to_string(in[k] - 1) + " on axis " +
                 std::to_string(k),
             shape_str(pads));
    if (mode == PadMode::edge && in[k] == 0 && (b || e))
      c.fail("attribute 'pads'", "no edge padding of the empty axis " + std::to_string(k),
             shape_str(pads));
    if (b > (INT64_MAX - in[k]) / 2 || e > (INT64_MAX - in[k]) / 2)
      c.fail("attribute 'pads'", "pads whose sum with the dims fits in int64", shape_str(pads));
    o[k] = in[k] + b + e;
  }
  return o;
}

void pad_kernel(const OpCall& c, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  using Dims = ops::RankArray<int64_t>;
  const Tensor& x = in[0];
  Tensor& y = out[0];
  const size_t rank = static_cast<size_t>(x.rank());
  const size_t es = dtype_size(x.dtype());
  const auto& pads = c.attrs.ints("pads");
  const PadMode mode = pad_mode(c);
  const Strides& ost = y.strides();
  char* base = static_cast<char*>(y.data());
  auto at = [&](const Dims& idx) {
    int64_t o = 0;
    for (size_t k = 0; k < rank; ++k) o += idx[k] * ost[k];
    return base + o * static_cast<int64_t>(es);
  };
  auto span = [](const Dims& d) { return std::span<const int64_t>(d.data(), d.size()); };
  if (y.numel() == 0) return;
  Dims interior(rank);
  for (size_t k = 0; k < rank; ++k) interior[k] = pads[k];
  if (mode == PadMode::constant) {
    uint64_t v = 0;
    shape::encode_value(y.dtype(), c.attrs.f("value"), &v);
    shape::fill(es, base, y.numel(), &v);
  }
  if (x.numel())
    shape::strided_copy(es, x.shape(), x.data(), x.strides(), at(interior), ost, tiles);
  if (mode == PadMode::constant || x.numel() == 0) return;
  // Borders axis by axis, innermost first, copying from the output itself.
  for (size_t d = rank; d-- > 0;) {
    const int64_t b = pads[d], e = pads[d + rank], n = x.shape()[d];
    Dims region(rank), start(rank);
    for (size_t k = 0; k < rank; ++k) {
      region[k] = k < d ? x.shape()[k] : y.shape()[k];
      start[k] = k < d ? pads[k] : 0;
    }
    for (int side = 0; side < 2; ++side) {
      const int64_t len = side == 0 ? b : e;
      if (!len) continue;
      region[d] = len;
      Dims dst = start, src = start, sst(rank);
      for (size_t k = 0; k < rank; ++k) sst[k] = ost[k];
      dst[d] = side == 0 ? 0 : b + n;
      if (mode == PadMode::edge) {
        src[d] = side == 0 ? b : b + n - 1;
        sst[d] = 0;
      } else if (side == 0) {  // y[i] = y[2b - i], i in [0, b)
        src[d] = 2 * b;
        sst[d] = -ost[d];
      } else {  // y[i] = y[2(b + n - 1) - i], i in [b + n, b + n + e)
        src[d] = b + n - 2;
        sst[d] = -ost[d];
      }
      shape::strided_copy(es, span(region), at(src), span(sst), at(dst), ost, tiles);
    }
  }
}

}  // namespace

void add_slice(Registry& r) {
  OpSchema s;
  s.name = "slice";
  s.family = "shape";
  s.doc =
      "ONNX Slice with attributes: per listed axis, elements start, start+step, ... before end. "
      "Negative starts/ends count from the end; values are clamped to [0, dim] (step > 0) or "
      "[-1, dim-1] (step < 0); steps may be negative, not 0.";
  s.inputs = {{"x", "any dtype, any strides"}};
  s.outputs = {{"y", "contiguous"}};
  s.attrs = {
      {"starts", AttrType::i64s, std::nullopt, "first index per axis"},
      {"ends", AttrType::i64s, std::nullopt, "end (exclusive) per axis"},
      {"axes", AttrType::i64s, std::vector<int64_t>{}, "axes (default 0..n-1; negative allowed)"},
      {"steps", AttrType::i64s, std::vector<int64_t>{}, "steps (default 1)"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) {
    const auto p = shape::slice_params(c);
    Shape o;
    for (const auto& d : p) o.push_back(d.len);
    return std::vector<TensorDesc>{{c.in(0).dtype, o}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const auto p = shape::slice_params(c);
    std::vector<int64_t> src(p.size());
    for_each_index(out[0].shape, [&](const std::vector<int64_t>& idx, int64_t f) {
      for (size_t k = 0; k < p.size(); ++k) src[k] = p[k].start + idx[k] * p[k].step;
      out[0].data[static_cast<size_t>(f)] =
          in[0].data[static_cast<size_t>(shape::flat_index(src, in[0].shape))];
    });
  };
  s.cases = [](DType t) {
    using V = std::vector<int64_t>;
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc d, V st, V en, V ax = {}, V sp = {}) {
      cs.push_back(cc(name, {d}, {{"starts", st}, {"ends", en}, {"axes", ax}, {"steps", sp}}));
    };
    add("[0]", TensorDesc(t, {0}), {0}, {5});
    add("[1]", TensorDesc(t, {1}), {0}, {1});
    add("[17]1:12:2", TensorDesc(t, {17}), {1}, {12}, {}, {2});
    add("[17]-1:-18:-1", TensorDesc(t, {17}), {-1}, {-18}, {}, {-1});
    add("[17]big", TensorDesc(t, {17}), {-1000}, {INT64_MAX}, {0}, {3});
    add("[17]rev_all", TensorDesc(t, {17}), {INT64_MAX}, {INT64_MIN}, {0}, {-1});
    add("[17]empty5:2", TensorDesc(t, {17}), {5}, {2});
    add("[4,33,5]ax-2", TensorDesc(t, {4, 33, 5}), {3}, {-3}, {-2});
    add("[4,33,5]2axes", TensorDesc(t, {4, 33, 5}), {30, 1}, {2, 5}, {1, 2}, {-4, 2});
    add("[2,3,4,5]", TensorDesc(t, {2, 3, 4, 5}), {1, 0, -1}, {2, 3, 0}, {0, 1, 2}, {1, 1, -1});
    add("[300,257]", TensorDesc(t, {300, 257}), {5, 17}, {290, 250}, {0, 1}, {1, 1});
    add("[300,257]rev", TensorDesc(t, {300, 257}), {-1}, {-300}, {1}, {-1});
    add("strided[33,17]^T", ops::transposed_desc(t, 33, 17), {2, 1}, {30, 16}, {}, {3, 1});
    add("strided[4,5,6]", TensorDesc(t, {4, 5, 6}, {70, 14, 2}), {1, -1}, {3, 0}, {0, 2}, {1, -2});
    return cs;
  };
  s.bench_case = [name = s.name](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema(name), kv, t);
  };
  r.add_op(std::move(s));
  add_move_kernels(r, "slice", slice_kernel);
}

void add_pad(Registry& r) {
  OpSchema s;
  s.name = "pad";
  s.family = "shape";
  s.doc =
      "Pads x by 'pads' = [x1_begin, x2_begin, ..., x1_end, x2_end, ...] (ONNX order, values >= "
      "0). "
      "mode constant fills 'value' (converted to x's dtype), reflect mirrors without repeating the "
      "edge (pads <= dim - 1), edge repeats the border element.";
  s.inputs = {{"x", "any dtype, any strides"}};
  s.outputs = {{"y", "contiguous"}};
  s.attrs = {{"pads", AttrType::i64s, std::nullopt, "begin pads of every axis, then end pads"},
             {"mode", AttrType::str, std::string("constant"), "constant|reflect|edge"},
             {"value", AttrType::f64, 0.0, "fill value of mode constant"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) { return std::vector<TensorDesc>{{c.in(0).dtype, pad_shape(c)}}; };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const auto& pads = c.attrs.ints("pads");
    const PadMode mode = pad_mode(c);
    const size_t rank = in[0].shape.size();
    const double value = c.attrs.f("value");
    std::vector<int64_t> src(rank);
    for_each_index(out[0].shape, [&](const std::vector<int64_t>& idx, int64_t f) {
      bool outside = false;
      for (size_t k = 0; k < rank; ++k) {
        const int64_t n = in[0].shape[k];
        int64_t i = idx[k] - pads[k];
        if (i < 0 || i >= n) {
          if (mode == PadMode::constant)
            outside = true;
          else if (mode == PadMode::edge)
            i = i < 0 ? 0 : n - 1;
          else
            i = i < 0 ? -i : 2 * (n - 1) - i;
        }
        src[k] = i;
      }
      out[0].data[static_cast<size_t>(f)] =
          outside ? value : in[0].data[static_cast<size_t>(shape::flat_index(src, in[0].shape))];
    });
  };
  s.cases = [](DType t) {
    using V = std::vector<int64_t>;
    std::vector<CheckCase> cs;
    for (const char* mode : {"constant", "reflect", "edge"}) {
      const std::string m = mode;
      auto add = [&](std::string name, TensorDesc d, V pads, double value = 0) {
        cs.push_back(cc(m + name, {d}, {{"pads", pads}, {"mode", m}, {"value", value}}));
      };
      if (m == "constant") {
        add("[0]", TensorDesc(t, {0}), {2, 3}, 1.5);
        add("[2,0]", TensorDesc(t, {2, 0}), {1, 1, 0, 2}, -2);
      }
      add("[1]", TensorDesc(t, {1}), m == "reflect" ? V{0, 0} : V{1, 2}, 2);
      add("[17]", TensorDesc(t, {17}), {3, 16}, -1);
      add("[5,7]", TensorDesc(t, {5, 7}), {1, 2, 4, 6});
      add("[3,4,5]", TensorDesc(t, {3, 4, 5}), {0, 1, 2, 2, 0, 3}, 7);
      add("[2,3,4,5]", TensorDesc(t, {2, 3, 4, 5}), {1, 0, 3, 1, 0, 2, 1, 4}, 7);
      add("[64,257]", TensorDesc(t, {64, 257}), {3, 5, 2, 17});
      add("strided[33,17]^T", ops::transposed_desc(t, 33, 17), {1, 2, 3, 4}, 0.5);
    }
    return cs;
  };
  s.bench_case = [name = s.name](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema(name), kv, t);
  };
  r.add_op(std::move(s));
  add_move_kernels(r, "pad", pad_kernel);
}

}  // namespace opsnn

// Index ops: cumsum, topk, rope (rotary position embedding), sample (top-k /
// top-p sampling). Schemas, shape inference, float64 references, case tables
// and per-ISA kernel registration.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "ops/index/index.h"
#include "ops/index/order.h"
#include "ops/shape/shape_util.h"
#include "opsnn/error.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

using index::AxisShape;

CheckCase cc(std::string name, std::vector<TensorDesc> in, Attrs attrs = {},
             std::vector<ValueRange> ranges = {}, double tol_scale = 1) {
  CheckCase c;
  c.name = std::move(name);
  c.inputs = std::move(in);
  c.attrs = std::move(attrs);
  c.ranges = std::move(ranges);
  c.tol_scale = tol_scale;
  return c;
}

AxisShape axis_shape(const Shape& s, int64_t axis) {
  return {shape::prod(s, 0, static_cast<size_t>(axis)), s[static_cast<size_t>(axis)],
          shape::prod(s, static_cast<size_t>(axis) + 1, s.size())};
}

using KernelBody = void (*)(const index::Kernels&, const OpCall&, const Tensor*, Tensor*, void*);

// One kernel per ISA; `workspace` (nullable) gives the bytes reported at create.
void add_kernels(Registry& r, const std::string& op, KernelBody fn,
                 size_t (*workspace)(const OpCall&) = nullptr) {
  ops::add_isa_kernels(r, op,
                       ops::PerIsa<index::Kernels>{index::kernels_avx512(), index::kernels_avx2(),
                                                   index::kernels_scalar()},
                       [fn, workspace](const index::Kernels& ks, Isa) {
                         return simple_kernel(
                             [fn, ks](const OpCall& c, const Tensor* in, Tensor* out, void* ws) {
                               fn(ks, c, in, out, ws);
                             },
                             nullptr,
                             workspace ? std::function<size_t(const OpCall&)>(workspace) : nullptr);
                       });
}

bool flag(const OpCall& c, const std::string& name) {
  const int64_t v = c.attrs.i(name);
  if (v != 0 && v != 1) c.fail("attribute '" + name + "'", "0 or 1", std::to_string(v));
  return v == 1;
}

// ---- cumsum -------------------------------------------------------------------
void add_cumsum(Registry& r) {
  OpSchema s;
  s.name = "cumsum";
  s.family = "index";
  s.doc =
      "Cumulative sum along 'axis' (f32 accumulation, in order). exclusive=1 leaves out the "
      "element itself (first output 0); reverse=1 sums from the end.";
  s.inputs = {{"x", "float tensor"}};
  s.outputs = {{"y", "same shape and dtype"}};
  s.attrs = {{"axis", AttrType::i64, int64_t{0}, "axis (negative counts from the end)"},
             {"exclusive", AttrType::i64, int64_t{0}, "0 or 1"},
             {"reverse", AttrType::i64, int64_t{0}, "0 or 1"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& c) {
    ops::require_float(c, 0);
    ops::require_rank_at_least(c, 0, 1);
    c.axis("attribute 'axis'", c.attrs.i("axis"), c.in(0).rank());
    flag(c, "exclusive");
    flag(c, "reverse");
    return std::vector<TensorDesc>{{c.in(0).dtype, c.in(0).shape}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const AxisShape a = axis_shape(in[0].shape, c.axis("axis", c.attrs.i("axis"), c.in(0).rank()));
    const bool ex = flag(c, "exclusive"), rev = flag(c, "reverse");
    for (int64_t o = 0; o < a.outer; ++o)
      for (int64_t j = 0; j < a.inner; ++j) {
        double acc = 0;
        for (int64_t q = 0; q < a.n; ++q) {
          const int64_t i = rev ? a.n - 1 - q : q;
          const size_t at = static_cast<size_t>((o * a.n + i) * a.inner + j);
          const double v = in[0].data[at];
          out[0].data[at] = ex ? acc : acc + v;
          acc += v;
        }
      }
  };
  // f32 accumulation over up to a few thousand terms: allow a little more than one rounding.
  s.tolerance = [](DType t) {
    Tolerance tol = default_tolerance(t);
    if (t == DType::f32) tol.atol = 1e-4;
    return tol;
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc d, int64_t axis, int64_t ex = 0, int64_t rev = 0) {
      cs.push_back(cc(name + "ax" + std::to_string(axis) + (ex ? "ex" : "") + (rev ? "rev" : ""),
                      {d}, {{"axis", axis}, {"exclusive", ex}, {"reverse", rev}}, {{-1, 1}}));
    };
    for (int64_t ex : {0, 1})
      for (int64_t rev : {0, 1}) {
        add("[0]", TensorDesc(t, {0}), 0, ex, rev);
        add("[1]", TensorDesc(t, {1}), 0, ex, rev);
        add("[17]", TensorDesc(t, {17}), -1, ex, rev);
        add("[1000]", TensorDesc(t, {1000}), 0, ex, rev);
        add("[3,5,7]", TensorDesc(t, {3, 5, 7}), 1, ex, rev);
        add("[4,33,37]", TensorDesc(t, {4, 33, 37}), -2, ex, rev);
        add("[2,300,65]", TensorDesc(t, {2, 300, 65}), 1, ex, rev);
        add("[7,3000]", TensorDesc(t, {7, 3000}), 1, ex, rev);
        add("[37,300] (row groups)", TensorDesc(t, {37, 300}), 1, ex, rev);
        add("[2,0,3]", TensorDesc(t, {2, 0, 3}), 2, ex, rev);
        add("strided[33,17]^T", ops::transposed_desc(t, 33, 17), 1, ex, rev);
        add("strided[33,17]^Tax0", ops::transposed_desc(t, 33, 17), 0, ex, rev);
      }
    return cs;
  };
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema("cumsum"), kv, t);
  };
  r.add_op(std::move(s));
  add_kernels(r, "cumsum",
              [](const index::Kernels& k, const OpCall& c, const Tensor* in, Tensor* out, void*) {
                const AxisShape a =
                    axis_shape(in[0].shape(), c.axis("axis", c.attrs.i("axis"), in[0].rank()));
                if (in[0].numel() == 0) return;
                k.cumsum(in[0].dtype(), in[0].data(), out[0].data(), a, c.attrs.i("exclusive") == 1,
                         c.attrs.i("reverse") == 1);
              });
}

// ---- topk -----------------------------------------------------------------------
void add_topk(Registry& r) {
  OpSchema s;
  s.name = "topk";
  s.family = "index";
  s.doc =
      "The k largest (largest=1) or smallest values along 'axis' and their i64 indices. Ties go to "
      "the lower index; NaN counts as larger than every number. sorted=1: best first; sorted=0: "
      "the same k elements in ascending index order.";
  s.inputs = {{"x", "float tensor"}};
  s.outputs = {{"values", "x's dtype, dim axis = k"}, {"indices", "i64, dim axis = k"}};
  s.attrs = {{"k", AttrType::i64, std::nullopt, "how many, 0 <= k <= dim"},
             {"axis", AttrType::i64, int64_t{-1}, "axis (negative counts from the end)"},
             {"largest", AttrType::i64, int64_t{1}, "1: largest, 0: smallest"},
             {"sorted", AttrType::i64, int64_t{1}, "1: best first, 0: index order"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& c) {
    ops::require_float(c, 0);
    ops::require_rank_at_least(c, 0, 1);
    const size_t ax =
        static_cast<size_t>(c.axis("attribute 'axis'", c.attrs.i("axis"), c.in(0).rank()));
    const int64_t k = c.attrs.i("k"), n = c.in(0).shape[ax];
    if (k < 0 || k > n)
      c.fail("attribute 'k'",
             "0 <= k <= " + std::to_string(n) + " (dim " + std::to_string(ax) + ")",
             std::to_string(k));
    flag(c, "largest");
    flag(c, "sorted");
    Shape o = c.in(0).shape;
    o[ax] = k;
    return std::vector<TensorDesc>{{c.in(0).dtype, o}, {DType::i64, o}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const AxisShape a = axis_shape(in[0].shape, c.axis("axis", c.attrs.i("axis"), c.in(0).rank()));
    const int64_t k = c.attrs.i("k");
    const bool largest = flag(c, "largest"), sorted = flag(c, "sorted");
    std::vector<int64_t> ord(static_cast<size_t>(a.n));
    for (int64_t o = 0; o < a.outer; ++o)
      for (int64_t j = 0; j < a.inner; ++j) {
        auto val = [&](int64_t i) {
          return in[0].data[static_cast<size_t>((o * a.n + i) * a.inner + j)];
        };
        std::iota(ord.begin(), ord.end(), 0);
        std::sort(ord.begin(), ord.end(), [&](int64_t x, int64_t y) {
          return index::before(val(x), x, val(y), y, largest);
        });
        if (!sorted) std::sort(ord.begin(), ord.begin() + k);
        for (int64_t q = 0; q < k; ++q) {
          const size_t at = static_cast<size_t>((o * k + q) * a.inner + j);
          out[0].data[at] = val(ord[static_cast<size_t>(q)]);
          out[1].data[at] = static_cast<double>(ord[static_cast<size_t>(q)]);
        }
      }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc d, int64_t k, int64_t axis = -1,
                   int64_t largest = 1, int64_t sorted = 1, ValueRange range = {-3, 3}) {
      cs.push_back(cc(name + "k" + std::to_string(k) + "ax" + std::to_string(axis) +
                          (largest ? "" : "small") + (sorted ? "" : "unsorted"),
                      {d}, {{"k", k}, {"axis", axis}, {"largest", largest}, {"sorted", sorted}},
                      {range}));
    };
    add("[0]", TensorDesc(t, {0}), 0);
    add("[1]", TensorDesc(t, {1}), 1);
    add("[17]", TensorDesc(t, {17}), 5);
    add("[17]", TensorDesc(t, {17}), 17, 0, 0);
    add("[17]ties", TensorDesc(t, {17}), 6, -1, 1, 1, {-2, 2, true});
    add("[17]ties", TensorDesc(t, {17}), 6, -1, 0, 0, {-2, 2, true});
    add("[3,1000]", TensorDesc(t, {3, 1000}), 50);
    add("[4,1000]ties", TensorDesc(t, {4, 1000}), 20, -1, 1, 1, {-2, 2, true});
    add("[4,1000]ties", TensorDesc(t, {4, 1000}), 20, -1, 0, 0, {-2, 2, true});
    add("[3,1000]", TensorDesc(t, {3, 1000}), 33, 1, 0, 0);
    add("[4,33,5]", TensorDesc(t, {4, 33, 5}), 7, 1);
    add("[4,33,5]", TensorDesc(t, {4, 33, 5}), 3, -3, 0, 1);
    add("[2,0,3]", TensorDesc(t, {2, 0, 3}), 0, 1);
    add("[2,32000]", TensorDesc(t, {2, 32000}), 40, -1, 1, 1, {-10, 10});
    add("strided[33,17]^T", ops::transposed_desc(t, 33, 17), 4);
    return cs;
  };
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema("topk"), kv, t);
  };
  r.add_op(std::move(s));
  add_kernels(
      r, "topk",
      [](const index::Kernels& k, const OpCall& c, const Tensor* in, Tensor* out, void* ws) {
        const AxisShape a =
            axis_shape(in[0].shape(), c.axis("axis", c.attrs.i("axis"), in[0].rank()));
        if (out[0].numel() == 0) return;
        k.topk(in[0].dtype(), in[0].data(), out[0].data(), out[1].data_as<int64_t>(), a,
               c.attrs.i("k"), c.attrs.i("largest") == 1, c.attrs.i("sorted") == 1, ws);
      },
      [](const OpCall& c) {
        const AxisShape a =
            axis_shape(c.in(0).shape, c.axis("axis", c.attrs.i("axis"), c.in(0).rank()));
        return index::topk_workspace(a, c.attrs.i("k"));
      });
}

// ---- rope -------------------------------------------------------------------------
struct RopeGeom {
  index::RopeParams p;
  int64_t table_rows = 0;
};

RopeGeom rope_geom(const OpCall& c) {
  RopeGeom g;
  ops::require_float(c, 0);
  ops::require_rank(c, 0, 4);
  const std::string& layout = c.attrs.s("layout");
  if (layout != "blhd" && layout != "bhld")
    c.fail("attribute 'layout'", "blhd|bhld", "'" + layout + "'");
  const std::string& mode = c.attrs.s("mode");
  if (mode != "half_split" && mode != "interleaved")
    c.fail("attribute 'mode'", "half_split|interleaved", "'" + mode + "'");
  const Shape& x = c.in(0).shape;
  g.p.bhld = layout == "bhld";
  g.p.interleaved = mode == "interleaved";
  g.p.B = x[0];
  g.p.L = g.p.bhld ? x[2] : x[1];
  g.p.H = g.p.bhld ? x[1] : x[2];
  g.p.D = x[3];
  g.p.R = c.attrs.i("rotary_dim") == 0 ? g.p.D : c.attrs.i("rotary_dim");
  if (g.p.R < 0 || g.p.R > g.p.D || g.p.R % 2)
    c.fail("attribute 'rotary_dim'",
           "an even value in [0, " + std::to_string(g.p.D) + "] (0 = head dim)",
           std::to_string(c.attrs.i("rotary_dim")));
  for (size_t i : {size_t{1}, size_t{2}}) {
    ops::require_same_dtype(c, i, 0);
    ops::require_rank(c, i, 2);
    if (c.in(i).shape[1] != g.p.R / 2)
      c.fail(ops::input_name(c, i),
             "[rows, " + std::to_string(g.p.R / 2) + "] (rotary_dim / 2 columns)",
             shape_str(c.in(i).shape));
  }
  if (c.in(2).shape != c.in(1).shape)
    c.fail("input 'sin'", "shape " + shape_str(c.in(1).shape) + " (as cos)",
           shape_str(c.in(2).shape));
  g.table_rows = c.in(1).shape[0];
  if (c.has_input(3)) {
    ops::require_dtype(c, 3, {DType::i64, DType::i32});
    const Shape& ps = c.in(3).shape;
    // Compared in place: run reads the geometry through here too.
    const bool bl = ps.size() == 2 && ps[0] == g.p.B && ps[1] == g.p.L;
    if (!bl && !(ps.size() == 1 && ps[0] == g.p.L))
      c.fail("input 'positions'",
             "shape " + shape_str({g.p.B, g.p.L}) + " or " + shape_str({g.p.L}), shape_str(ps));
  } else if (g.table_rows < g.p.L) {
    c.fail("input 'cos'", "at least L = " + std::to_string(g.p.L) + " rows (no positions given)",
           shape_str(c.in(1).shape));
  }
  return g;
}

// Table row of every (b, l), validated: positions must lie in [0, table rows).
// Table row per (b, l) from the positions ([B, L] or [L]); pos(i) is the
// i-th position as a double.
template <class Pos>
void rope_rows(const OpCall& c, Pos pos, const Shape& ps, const RopeGeom& g, int64_t* rows) {
  for (int64_t b = 0; b < g.p.B; ++b)
    for (int64_t l = 0; l < g.p.L; ++l) {
      const double v = pos(ps.size() == 2 ? b * g.p.L + l : l);
      if (v < 0 || v >= static_cast<double>(g.table_rows))
        c.fail("input 'positions'",
               "values in [0, " + std::to_string(g.table_rows) + ") (rows of cos/sin)",
               std::to_string(static_cast<int64_t>(v)));
      rows[b * g.p.L + l] = static_cast<int64_t>(v);
    }
}

void add_rope(Registry& r) {
  OpSchema s;
  s.name = "rope";
  s.family = "index";
  s.doc =
      "Rotary position embedding. x [B, L, H, D] (layout blhd) or [B, H, L, D] (bhld); cos, sin "
      "[rows, rotary_dim / 2] (x's dtype); optional positions (i64/i32, [B, L] or [L]) select the "
      "table row of each (b, l), else row l. mode half_split (GPT-NeoX/LLaMA) rotates pairs "
      "(i, i + R/2), interleaved (GPT-J) pairs (2i, 2i + 1): (a, b) -> (a cos - b sin, b cos + a "
      "sin). Dims from rotary_dim on are copied. A position outside the table is a run-time error.";
  s.inputs = {{"x", "[B, L, H, D] or [B, H, L, D]"},
              {"cos", "[rows, R/2]"},
              {"sin", "[rows, R/2]"},
              {"positions", "i64/i32 [B, L] or [L]", true}};
  s.outputs = {{"y", "x's shape and dtype"}};
  s.attrs = {
      {"layout", AttrType::str, std::string("blhd"), "blhd|bhld"},
      {"mode", AttrType::str, std::string("half_split"), "half_split|interleaved"},
      {"rotary_dim", AttrType::i64, int64_t{0}, "rotated leading dims of each head (even; 0 = D)"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& c) {
    rope_geom(c);
    return std::vector<TensorDesc>{{c.in(0).dtype, c.in(0).shape}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const RopeGeom g = rope_geom(c);
    const auto& p = g.p;
    std::vector<int64_t> rows(static_cast<size_t>(p.B * p.L));
    if (c.has_input(3))
      rope_rows(
          c, [&](int64_t i) { return in[3].data[static_cast<size_t>(i)]; }, in[3].shape, g,
          rows.data());
    else
      for (int64_t i = 0; i < p.B * p.L; ++i)
        rows[static_cast<size_t>(i)] = i % std::max<int64_t>(p.L, 1);
    const int64_t half = p.R / 2;
    for (int64_t b = 0; b < p.B; ++b)
      for (int64_t l = 0; l < p.L; ++l)
        for (int64_t h = 0; h < p.H; ++h) {
          const int64_t base = (p.bhld ? (b * p.H + h) * p.L + l : (b * p.L + l) * p.H + h) * p.D;
          const int64_t tr = rows[static_cast<size_t>(b * p.L + l)];
          const double* x = in[0].data.data() + base;
          double* y = out[0].data.data() + base;
          for (int64_t d = p.R; d < p.D; ++d) y[d] = x[d];
          for (int64_t i = 0; i < half; ++i) {
            const double cv = in[1].data[static_cast<size_t>(tr * half + i)],
                         sv = in[2].data[static_cast<size_t>(tr * half + i)];
            const int64_t i1 = p.interleaved ? 2 * i : i, i2 = p.interleaved ? 2 * i + 1 : i + half;
            y[i1] = x[i1] * cv - x[i2] * sv;
            y[i2] = x[i2] * cv + x[i1] * sv;
          }
        }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    const ValueRange xr{-2, 2}, tr{-1, 1};
    for (const char* mode : {"half_split", "interleaved"}) {
      auto add = [&](std::string name, Shape x, std::string layout, int64_t rd, int64_t rows,
                     Shape pos = {}, TensorDesc xd = {}) {
        const int64_t D = x[3], R = rd ? rd : D;
        std::vector<TensorDesc> in = {xd.shape.empty() ? TensorDesc(t, x) : xd,
                                      TensorDesc(t, {rows, R / 2}), TensorDesc(t, {rows, R / 2})};
        std::vector<ValueRange> rg = {xr, tr, tr};
        if (!pos.empty()) {
          in.push_back(TensorDesc(DType::i64, pos));
          rg.push_back({0, static_cast<double>(rows - 1), true});
        }
        cs.push_back(cc(std::string(mode) + "_" + layout + name, in,
                        {{"layout", layout}, {"mode", std::string(mode)}, {"rotary_dim", rd}}, rg));
      };
      add("[1,1,1,2]", {1, 1, 1, 2}, "blhd", 0, 1);
      add("[0,3,2,8]", {0, 3, 2, 8}, "blhd", 0, 3);
      add("[2,3,4,8]", {2, 3, 4, 8}, "blhd", 0, 3);
      add("[2,3,4,8]", {2, 4, 3, 8}, "bhld", 0, 5);
      add("[1,17,3,64]", {1, 17, 3, 64}, "blhd", 0, 17);
      add("[2,5,2,34]r18", {2, 5, 2, 34}, "blhd", 18, 5);
      add("[2,3,5,64]r32pos", {2, 3, 5, 64}, "bhld", 32, 50, {2, 5});
      add("[2,7,2,16]posL", {2, 7, 2, 16}, "blhd", 0, 9, {7});
      add("[1,64,8,128]", {1, 64, 8, 128}, "blhd", 0, 64);
      add("strided[2,3,4,8]", {2, 3, 4, 8}, "blhd", 0, 3, {},
          TensorDesc(t, {2, 3, 4, 8}, {96, 8, 24, 1}));
    }
    return cs;
  };
  // bench: b, l, h, d, rotary_dim, layout, mode.
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    ops::CaseKeys keys("rope", kv);
    const int64_t B = keys.i("b", 1), L = keys.i("l", 2048), H = keys.i("h", 32),
                  D = keys.i("d", 128), rd = keys.i("rotary_dim", 0);
    const std::string layout = keys.s("layout", "blhd");
    const std::string mode = keys.s("mode", "half_split");
    keys.done();
    const int64_t R = rd ? rd : D;
    CheckCase c;
    c.name = "bench";
    c.inputs = {TensorDesc(t, layout == "bhld" ? Shape{B, H, L, D} : Shape{B, L, H, D}),
                TensorDesc(t, {L, R / 2}), TensorDesc(t, {L, R / 2})};
    c.attrs = {{"layout", layout}, {"mode", mode}, {"rotary_dim", rd}};
    c.ranges = {{-2, 2}, {-1, 1}, {-1, 1}};
    return c;
  };
  r.add_op(std::move(s));
  add_kernels(
      r, "rope",
      [](const index::Kernels& k, const OpCall& c, const Tensor* in, Tensor* out, void* ws) {
        RopeGeom g = rope_geom(c);
        if (in[0].numel() == 0) return;
        if (c.has_input(3)) {
          // The table row per (b, l), in the workspace.
          const Tensor& pos = in[3];
          int64_t* rows = static_cast<int64_t*>(ws);
          rope_rows(
              c,
              [&](int64_t i) {
                return pos.dtype() == DType::i64 ? static_cast<double>(pos.data_as<int64_t>()[i])
                                                 : static_cast<double>(pos.data_as<int32_t>()[i]);
              },
              pos.shape(), g, rows);
          g.p.rows = rows;
        }
        k.rope(in[0].dtype(), in[0].data(), in[1].data(), in[2].data(), out[0].data(), g.p);
      },
      [](const OpCall& c) {
        if (!c.has_input(3)) return size_t{0};
        const RopeGeom g = rope_geom(c);
        return static_cast<size_t>(g.p.B * g.p.L) * sizeof(int64_t);
      });
}

// ---- sample -------------------------------------------------------------------------
index::SampleParams sample_params(const OpCall& c) {
  index::SampleParams p;
  p.k = c.attrs.i("k");
  p.p = c.attrs.f("p");
  p.temperature = c.attrs.f("temperature");
  p.seed = static_cast<uint64_t>(c.attrs.i("seed"));
  if (p.k < 0) c.fail("attribute 'k'", "k >= 0 (0 = no top-k filter)", std::to_string(p.k));
  if (!(p.p > 0 && p.p <= 1)) c.fail("attribute 'p'", "0 < p <= 1", std::to_string(p.p));
  if (!(p.temperature >= 0) || std::isinf(p.temperature))
    c.fail("attribute 'temperature'", "a finite value >= 0 (0 = greedy)",
           std::to_string(p.temperature));
  return p;
}

void add_sample(Registry& r) {
  OpSchema s;
  s.name = "sample";
  s.family = "index";
  s.doc =
      "Draws one token per row of logits [B, V] (i64 [B]). Candidates: all tokens ordered by logit "
      "(ties: lower index first; NaN counts as largest), cut to the first k (k > 0). Weights "
      "w_j = exp((l_j - l_0) / temperature) are summed in that order in float64; top-p keeps the "
      "shortest prefix whose cumulative weight reaches p * total. One uniform u per row, u = "
      "(splitmix64(splitmix64(seed) + row) >> 11) * 2^-53, picks the first candidate whose "
      "cumulative weight exceeds u * kept total. temperature 0 is greedy (arg-max, lower index on "
      "ties). Deterministic for a seed, whatever the thread count.";
  s.inputs = {{"logits", "[B, V] float"}};
  s.outputs = {{"tokens", "i64 [B]"}};
  s.attrs = {{"k", AttrType::i64, int64_t{0}, "top-k filter (0: off)"},
             {"p", AttrType::f64, 1.0, "top-p (nucleus) mass in (0, 1] (1: off)"},
             {"temperature", AttrType::f64, 1.0, "softmax temperature >= 0 (0: greedy)"},
             {"seed", AttrType::i64, int64_t{0}, "seed of the per-row counter-based generator"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& c) {
    ops::require_float(c, 0);
    ops::require_rank(c, 0, 2);
    if (c.in(0).shape[1] < 1) c.fail("input 'logits'", "V >= 1 tokens", shape_str(c.in(0).shape));
    sample_params(c);
    return std::vector<TensorDesc>{{DType::i64, {c.in(0).shape[0]}}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const index::SampleParams p = sample_params(c);
    const int64_t B = in[0].shape[0], V = in[0].shape[1];
    std::vector<int64_t> ord(static_cast<size_t>(V));
    std::vector<double> v(static_cast<size_t>(V)), w(static_cast<size_t>(V));
    for (int64_t b = 0; b < B; ++b) {
      const double* row = in[0].data.data() + b * V;
      std::iota(ord.begin(), ord.end(), 0);
      std::sort(ord.begin(), ord.end(),
                [&](int64_t x, int64_t y) { return index::before(row[x], x, row[y], y, true); });
      const int64_t m = p.temperature == 0 ? 1 : (p.k > 0 ? std::min(p.k, V) : V);
      for (int64_t j = 0; j < m; ++j) v[static_cast<size_t>(j)] = row[ord[static_cast<size_t>(j)]];
      out[0].data[static_cast<size_t>(b)] = static_cast<double>(index::sample_pick(
          v.data(), ord.data(), m, p.temperature, p.p, index::sample_uniform(p.seed, b), w.data()));
    }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, Shape sh, int64_t k, double p, double temp, int64_t seed,
                   ValueRange rg = {-5, 5}) {
      cs.push_back(cc(name + "k" + std::to_string(k) + "p" + std::to_string(p).substr(0, 4) + "t" +
                          std::to_string(temp).substr(0, 4) + "s" + std::to_string(seed),
                      {TensorDesc(t, sh)},
                      {{"k", k}, {"p", p}, {"temperature", temp}, {"seed", seed}}, {rg}));
    };
    add("[0,5]", {0, 5}, 0, 1, 1, 1);
    add("[1,1]", {1, 1}, 0, 1, 1, 1);
    add("[1,7]", {1, 7}, 0, 1, 1, 7);
    add("[3,17]", {3, 17}, 5, 1, 0.7, 2);
    add("[3,17]", {3, 17}, 0, 0.9, 1, 3);
    add("[3,17]ties", {3, 17}, 4, 0.8, 1.3, 4, {-2, 2, true});
    add("[4,1000]", {4, 1000}, 50, 0.95, 0.8, 5);
    add("[4,1000]", {4, 1000}, 0, 1, 1, -6);
    add("[4,1000]greedy", {4, 1000}, 0, 1, 0, 0);
    add("[4,1000]k1", {4, 1000}, 1, 1, 1, 9);
    add("[4,1000]ties", {4, 1000}, 30, 0.9, 1, 10, {-2, 2, true});
    add("[16,33]", {16, 33}, 40, 0.5, 2, 123456789);
    add("[2,32000]", {2, 32000}, 40, 0.9, 0.7, 42, {-10, 10});
    add("[2,32000]", {2, 32000}, 0, 0.3, 1, 43, {-10, 10});
    return cs;
  };
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema("sample"), kv, t);
  };
  r.add_op(std::move(s));
  add_kernels(
      r, "sample",
      [](const index::Kernels& k, const OpCall& c, const Tensor* in, Tensor* out, void* ws) {
        if (out[0].numel() == 0) return;
        k.sample(in[0].dtype(), in[0].data(), out[0].data_as<int64_t>(), in[0].shape()[0],
                 in[0].shape()[1], sample_params(c), ws);
      },
      [](const OpCall& c) { return index::sample_workspace(c.in(0).shape[0], c.in(0).shape[1]); });
}

}  // namespace

void register_index_ops(Registry& r) {
  add_cumsum(r);
  add_topk(r);
  add_rope(r);
  add_sample(r);
}

}  // namespace opsnn

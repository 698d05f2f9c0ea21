// Schemas, float64 references, case tables and kernels of the reductions:
// sum, mean, max, min over any axes (attribute `axes`, empty = all axes;
// `keepdims` 1 keeps reduced axes as size 1) and argmax over one `axis`
// (int64 output, first index on ties).
//
// NaN: sum/mean propagate it as IEEE arithmetic does; max/min return NaN if
// any reduced element is NaN (as NumPy/PyTorch); argmax returns the index of
// the first NaN if any (NaN counts as the maximum, as NumPy/PyTorch).
// Empty reductions: sum gives 0, mean NaN; max, min and argmax reject a
// reduced extent of 0.
#include "ops/reduce/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "opsnn/error.h"
#include "opsnn/op.h"

namespace opsnn {
namespace reduce {

Plan make_plan(const Shape& shape, const std::vector<int64_t>& axes) {
  std::vector<bool> red(shape.size(), false);
  for (int64_t a : axes)
    if (a < static_cast<int64_t>(shape.size())) red[static_cast<size_t>(a)] = true;
  std::vector<std::pair<int64_t, bool>> g;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1) continue;
    if (!g.empty() && g.back().second == red[k])
      g.back().first *= shape[k];
    else
      g.push_back({shape[k], red[k]});
  }
  if (g.empty()) g.push_back({1, true});
  Plan p;
  p.inner = g.back().first;
  p.inner_reduced = g.back().second;
  int64_t stride = p.inner;
  std::vector<int64_t> st(g.size(), 1);
  for (size_t k = g.size() - 1; k-- > 0;) {
    st[k] = stride;
    stride *= g[k].first;
  }
  for (size_t k = 0; k + 1 < g.size(); ++k) {
    if (g[k].second) {
      p.rdims.push_back(g[k].first);
      p.rstrides.push_back(st[k]);
      p.rcount *= g[k].first;
    } else {
      p.kdims.push_back(g[k].first);
      p.kstrides.push_back(st[k]);
      p.kcount *= g[k].first;
    }
  }
  p.nred = p.rcount * (p.inner_reduced ? p.inner : 1);
  if (p.inner_reduced && p.nred > 0) {
    if (p.inner >= kBlock) {
      p.subs_per_seg = (p.inner + kBlock - 1) / kBlock;
      p.nblocks = p.rcount * p.subs_per_seg;
    } else {
      p.segs_per_block = std::max<int64_t>(1, kBlock / p.inner);
      p.nblocks = (p.rcount + p.segs_per_block - 1) / p.segs_per_block;
    }
    p.split_outputs = p.kcount < 8 && p.nblocks >= 2;
  }
  if (!p.inner_reduced) {
    p.ki_ncc = (p.inner + kColChunk - 1) / kColChunk;
    p.ki_nrb = (p.rcount + kRowBlock - 1) / kRowBlock;
    p.ki_cw = std::min(kColChunk, (p.inner + 15) / 16 * 16);
    p.ki_split = p.kcount * p.ki_ncc < 8 && p.ki_nrb >= 2;
  }
  return p;
}

}  // namespace reduce

namespace {

using reduce::Kind;

std::vector<int64_t> reduced_axes(const OpCall& call) {
  return ops::normalize_axes(call, "attribute 'axes'", call.attrs.ints("axes"), call.in(0).rank());
}

int64_t keepdims_of(const OpCall& call) {
  const int64_t k = call.attrs.i("keepdims");
  if (k != 0 && k != 1) call.fail("attribute 'keepdims'", "0 or 1", std::to_string(k));
  return k;
}

// Output shape for reducing `axes` (sorted) of `in`.
Shape reduced_shape(const Shape& in, const std::vector<int64_t>& axes, bool keep) {
  Shape out;
  for (size_t k = 0; k < in.size(); ++k) {
    const bool r = std::find(axes.begin(), axes.end(), static_cast<int64_t>(k)) != axes.end();
    if (!r)
      out.push_back(in[k]);
    else if (keep)
      out.push_back(1);
  }
  return out;
}

class ReduceKernel : public KernelInstance {
 public:
  ReduceKernel(Kind kind, reduce::RunFn fn, reduce::Plan plan)
      : kind_(kind), fn_(fn), plan_(std::move(plan)) {}
  size_t workspace_bytes() const override { return plan_.workspace_bytes(); }
  void run(const Tensor* in, Tensor* out, void* ws) override {
    fn_(kind_, in[0].dtype(), plan_, in[0].data(), out[0].data(), static_cast<float*>(ws));
  }

 private:
  Kind kind_;
  reduce::RunFn fn_;
  reduce::Plan plan_;
};

struct ReduceDef {
  const char* name;
  Kind kind;
  const char* doc;
};

// Sums in f32: the accumulation error grows like eps * sqrt(n) * |partial
// sums| (~sqrt(n) for mixed-sign data) while the default f32 tolerance
// (atol 1e-6, rtol 1e-5) is meant for O(1) work per output, and the outputs of
// mixed-sign sums can be near 0 (cancellation). Sum/mean cases draw from
// [-1, 1] and scale the tolerance by sqrt(n)/4 (n = elements per output):
// 64x at n = 65537, where outputs are ~150 and a dropped or doubled element
// (~0.5) would still exceed the allowed error.
double sum_tol_scale(int64_t n) { return std::max(1.0, std::sqrt(static_cast<double>(n)) / 4); }

std::vector<CheckCase> reduce_cases(DType t, Kind kind) {
  const bool is_sum = kind != Kind::max && kind != Kind::min;
  std::vector<CheckCase> cs;
  auto add = [&](const std::string& name, TensorDesc x, std::vector<int64_t> axes, int64_t keep,
                 int64_t nred) {
    CheckCase c{name, {std::move(x)}, {{"axes", std::move(axes)}, {"keepdims", keep}}, {{-3, 3}}};
    if (is_sum) {
      // Products of values near 1 stay finite over 65537 factors.
      c.ranges = {kind == Kind::prod ? ValueRange{0.95, 1.05} : ValueRange{-1, 1}};
      c.tol_scale = sum_tol_scale(nred);
    }
    cs.push_back(std::move(c));
  };
  add("[1]all", TensorDesc(t, {1}), {}, 1, 1);
  add("[7]all", TensorDesc(t, {7}), {}, 1, 7);
  add("[17]all", TensorDesc(t, {17}), {}, 0, 17);
  add("[1000]all", TensorDesc(t, {1000}), {}, 1, 1000);
  add("[65537]all", TensorDesc(t, {65537}), {}, 1, 65537);
  add("[]all", TensorDesc(t, Shape{}), {}, 1, 1);
  add("[3,5,7]ax1", TensorDesc(t, {3, 5, 7}), {1}, 1, 5);
  add("[3,5,7]ax0,2", TensorDesc(t, {3, 5, 7}), {0, 2}, 1, 21);
  add("[3,5,7]ax-1,0", TensorDesc(t, {3, 5, 7}), {-1, 0}, 0, 21);
  add("[3,5,7]ax2nokeep", TensorDesc(t, {3, 5, 7}), {2}, 0, 7);
  add("[64,1000]ax1", TensorDesc(t, {64, 1000}), {1}, 1, 1000);
  add("[1000,33]ax0", TensorDesc(t, {1000, 33}), {0}, 1, 1000);
  add("[33,17]ax0", TensorDesc(t, {33, 17}), {0}, 0, 33);
  add("[33,17]ax1", TensorDesc(t, {33, 17}), {1}, 1, 17);
  add("[2,16,5,7]ax2,3", TensorDesc(t, {2, 16, 5, 7}), {2, 3}, 1, 35);
  add("[2,16,5,7]ax0,2,3", TensorDesc(t, {2, 16, 5, 7}), {0, 2, 3}, 1, 70);
  add("[2,16,5,7]ax1", TensorDesc(t, {2, 16, 5, 7}), {1}, 1, 16);
  add("[4,1,6]ax1", TensorDesc(t, {4, 1, 6}), {1}, 1, 1);
  add("[5,6]all_nokeep", TensorDesc(t, {5, 6}), {}, 0, 30);
  add("large[65537,3]ax0", TensorDesc(t, {65537, 3}), {0}, 1, 65537);
  add("large[3,65537]ax1", TensorDesc(t, {3, 65537}), {1}, 1, 65537);
  add("large[257,255]all", TensorDesc(t, {257, 255}), {0, 1}, 1, 257 * 255);
  add("large[9,8193,2]ax0,2", TensorDesc(t, {9, 8193, 2}), {0, 2}, 1, 18);
  add("large[8,4097,3]ax1", TensorDesc(t, {8, 4097, 3}), {1}, 1, 4097);
  add("strided[33,17]^T ax1", ops::transposed_desc(t, 33, 17), {1}, 1, 17);
  add("strided[33,17]^T ax0", ops::transposed_desc(t, 33, 17), {0}, 0, 33);
  add("empty_kept[0,5]ax1", TensorDesc(t, {0, 5}), {1}, 1, 5);
  if (is_sum) {
    add("empty_red[2,0,3]ax1", TensorDesc(t, {2, 0, 3}), {1}, 1, 0);
    add("empty_red[3,0]ax1", TensorDesc(t, {3, 0}), {1}, 0, 0);
    add("empty[0]all", TensorDesc(t, {0}), {}, 1, 0);
  }
  return cs;
}

// `opsnn bench --case shape=AxBxC[,axes=1:2][,keepdims=0]` (argmax: axis=N).
CheckCase reduce_bench_case(const std::string& op, const std::map<std::string, std::string>& kv,
                            DType t, bool arg) {
  ops::CaseKeys keys(op, kv);
  CheckCase c;
  c.name = "bench";
  const Shape shape = keys.dims("shape", {int64_t{1} << 24});
  if (keys.has("keepdims")) c.attrs.set("keepdims", keys.i("keepdims", 1));
  if (arg && keys.has("axis")) c.attrs.set("axis", keys.i("axis", 0));
  if (!arg && keys.has("axes")) c.attrs.set("axes", keys.ints("axes", ':', {}));
  keys.done();
  c.inputs = {TensorDesc(t, shape)};
  c.ranges = {{-1, 1}};
  return c;
}

void add_reduce(Registry& r, const ReduceDef& d) {
  OpSchema s;
  s.name = d.name;
  s.family = "reduce";
  s.doc = std::string(d.doc) + " over `axes` (empty = all); keepdims=1 keeps them as size 1";
  s.inputs = {{"x", "input tensor"}};
  s.outputs = {{"y", "x with the reduced axes removed (or size 1), dtype of x"}};
  s.attrs = {
      {"axes", AttrType::i64s, std::vector<int64_t>{},
       "axes to reduce (negative from the end); empty: all"},
      {"keepdims", AttrType::i64, int64_t{1}, "1: keep reduced axes as size 1; 0: drop them"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [kind = d.kind](const OpCall& call) {
    ops::require_float(call, 0);
    const std::vector<int64_t> axes = reduced_axes(call);
    const bool keep = keepdims_of(call) != 0;
    const Shape& xs = call.in(0).shape;
    if (kind == Kind::max || kind == Kind::min) {
      for (int64_t a : axes)
        if (a < static_cast<int64_t>(xs.size()) && xs[static_cast<size_t>(a)] == 0)
          call.fail("input 'x'", "a non-empty extent on reduced axis " + std::to_string(a),
                    shape_str(xs));
    }
    return std::vector<TensorDesc>{TensorDesc(call.in(0).dtype, reduced_shape(xs, axes, keep))};
  };
  s.reference = [kind = d.kind](const OpCall& call, const std::vector<RefTensor>& in,
                                std::vector<RefTensor>& out) {
    const Shape& xs = in[0].shape;
    const std::vector<int64_t> axes = reduced_axes(call);
    std::vector<bool> red(xs.size(), false);
    int64_t nred = 1;
    for (int64_t a : axes)
      if (a < static_cast<int64_t>(xs.size())) {
        red[static_cast<size_t>(a)] = true;
        nred *= xs[static_cast<size_t>(a)];
      }
    std::vector<double>& y = out[0].data;
    const double init = kind == Kind::max    ? -INFINITY
                        : kind == Kind::min  ? INFINITY
                        : kind == Kind::prod ? 1.0
                                             : 0.0;
    std::fill(y.begin(), y.end(), init);
    for (size_t i = 0; i < in[0].data.size(); ++i) {
      int64_t rem = static_cast<int64_t>(i), o = 0, ostride = 1;
      for (size_t k = xs.size(); k-- > 0;) {
        const int64_t c = rem % xs[k];
        rem /= xs[k];
        if (!red[k]) {
          o += c * ostride;
          ostride *= xs[k];
        }
      }
      double& acc = y[static_cast<size_t>(o)];
      const double v = in[0].data[i];
      if (kind == Kind::sum || kind == Kind::mean)
        acc += v;
      else if (kind == Kind::prod)
        acc *= v;
      else if (kind == Kind::sum_square || kind == Kind::l2)
        acc += v * v;
      else if (kind == Kind::l1)
        acc += std::fabs(v);
      else if (std::isnan(acc) || std::isnan(v))
        acc = NAN;
      else
        acc = kind == Kind::max ? std::max(acc, v) : std::min(acc, v);
    }
    if (kind == Kind::mean)
      for (double& v : y) v /= static_cast<double>(nred);
    if (kind == Kind::l2)
      for (double& v : y) v = std::sqrt(v);
  };
  s.cases = [kind = d.kind](DType t) { return reduce_cases(t, kind); };
  s.bench_case = [name = std::string(d.name)](const std::map<std::string, std::string>& kv,
                                              DType t) {
    return reduce_bench_case(name, kv, t, false);
  };
  r.add_op(std::move(s));

  ops::add_isa_kernels(
      r, d.name,
      ops::PerIsa<reduce::RunFn>{reduce::run_avx512(), reduce::run_avx2(), reduce::run_scalar()},
      [kind = d.kind](reduce::RunFn fn, Isa) {
        return [fn, kind](const OpCall& call, std::string* why) -> std::unique_ptr<KernelInstance> {
          reduce::Plan plan = reduce::make_plan(call.in(0).shape, reduced_axes(call));
          if (plan.kdims.size() > reduce::kMaxGroups || plan.rdims.size() > reduce::kMaxGroups) {
            if (why) *why = "more than 32 alternating kept/reduced axis groups";
            return nullptr;
          }
          return std::make_unique<ReduceKernel>(kind, fn, std::move(plan));
        };
      });
}

// ---- argmax ------------------------------------------------------------------

struct ArgmaxGeom {
  int64_t outer = 1, n = 1, inner = 1;
};
ArgmaxGeom argmax_geom(const OpCall& call) {
  const Shape& xs = call.in(0).shape;
  const int64_t rank = call.in(0).rank();
  ArgmaxGeom g;
  if (rank == 0) return g;
  const int64_t a = call.axis("attribute 'axis'", call.attrs.i("axis"), rank);
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t d = xs[static_cast<size_t>(k)];
    if (k < a)
      g.outer *= d;
    else if (k == a)
      g.n = d;
    else
      g.inner *= d;
  }
  return g;
}

class ArgmaxKernel : public KernelInstance {
 public:
  ArgmaxKernel(reduce::ArgmaxFn fn, bool min, ArgmaxGeom g) : fn_(fn), min_(min), g_(g) {}
  void run(const Tensor* in, Tensor* out, void*) override {
    fn_(min_, in[0].dtype(), in[0].data(), out[0].data_as<int64_t>(), g_.outer, g_.n, g_.inner);
  }

 private:
  reduce::ArgmaxFn fn_;
  bool min_;
  ArgmaxGeom g_;
};

std::vector<CheckCase> argmax_cases(DType t) {
  std::vector<CheckCase> cs;
  auto add = [&](const std::string& name, TensorDesc x, int64_t axis, int64_t keep,
                 ValueRange r = {-3, 3}) {
    cs.push_back({name, {std::move(x)}, {{"axis", axis}, {"keepdims", keep}}, {r}});
  };
  add("[1]ax0", TensorDesc(t, {1}), 0, 1);
  add("[7]ax0", TensorDesc(t, {7}), 0, 1);
  add("[17]ax0", TensorDesc(t, {17}), 0, 0);
  add("[1000]ax0", TensorDesc(t, {1000}), 0, 1);
  add("[65537]ax0", TensorDesc(t, {65537}), 0, 1);
  add("[]ax0", TensorDesc(t, Shape{}), 0, 1);
  add("[3,5,7]ax1", TensorDesc(t, {3, 5, 7}), 1, 1);
  add("[3,5,7]ax-1", TensorDesc(t, {3, 5, 7}), -1, 0);
  add("[3,5,7]ax0", TensorDesc(t, {3, 5, 7}), 0, 1);
  add("logits[64,1000]ax1", TensorDesc(t, {64, 1000}), 1, 0);
  add("[1000,33]ax0", TensorDesc(t, {1000, 33}), 0, 1);
  add("[33,17]ax0", TensorDesc(t, {33, 17}), 0, 0);
  add("ties[64,1000]ax1", TensorDesc(t, {64, 1000}), 1, 1, {-3, 3, true});
  add("ties[100,40]ax0", TensorDesc(t, {100, 40}), 0, 1, {-3, 3, true});
  add("large[3,65537]ax1", TensorDesc(t, {3, 65537}), 1, 1);
  add("large[65537,3]ax0", TensorDesc(t, {65537, 3}), 0, 1);
  add("strided[33,17]^T ax1", ops::transposed_desc(t, 33, 17), 1, 1);
  add("strided[33,17]^T ax0", ops::transposed_desc(t, 33, 17), 0, 1);
  add("empty_kept[0,5]ax1", TensorDesc(t, {0, 5}), 1, 1);
  return cs;
}

// argmax, or argmin (`min`): the argmax of -x.
void add_argmax(Registry& r, bool min) {
  const std::string name = min ? "argmin" : "argmax";
  OpSchema s;
  s.name = name;
  s.family = "reduce";
  s.doc = min ? "index of the minimum along `axis` (int64); first index on ties; a NaN counts as "
                "the minimum (the first NaN's index is returned)"
              : "index of the maximum along `axis` (int64); first index on ties; a NaN counts as "
                "the maximum (the first NaN's index is returned)";
  s.inputs = {{"x", "input tensor"}};
  s.outputs = {{"y", "int64 indices: x with `axis` removed (keepdims=0) or size 1"}};
  s.attrs = {{"axis", AttrType::i64, int64_t{0},
              "axis to reduce (negative from the end), as ONNX ArgMax / ArgMin"},
             {"keepdims", AttrType::i64, int64_t{1}, "1: keep the axis as size 1; 0: drop it"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    ops::require_float(call, 0);
    const bool keep = keepdims_of(call) != 0;
    const Shape& xs = call.in(0).shape;
    const int64_t rank = call.in(0).rank();
    const int64_t a = call.axis("attribute 'axis'", call.attrs.i("axis"), rank);
    if (rank > 0 && xs[static_cast<size_t>(a)] == 0)
      call.fail("input 'x'", "a non-empty extent on axis " + std::to_string(a), shape_str(xs));
    return std::vector<TensorDesc>{
        TensorDesc(DType::i64, rank == 0 ? Shape{} : reduced_shape(xs, {a}, keep))};
  };
  s.reference = [min](const OpCall& call, const std::vector<RefTensor>& in,
                      std::vector<RefTensor>& out) {
    const ArgmaxGeom g = argmax_geom(call);
    const double sign = min ? -1.0 : 1.0;
    const std::vector<double>& x = in[0].data;
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t j = 0; j < g.inner; ++j) {
        int64_t bi = 0;
        double bv = sign * x[static_cast<size_t>(o * g.n * g.inner + j)];
        for (int64_t i = 1; i < g.n && !std::isnan(bv); ++i) {
          const double v = sign * x[static_cast<size_t>((o * g.n + i) * g.inner + j)];
          if (std::isnan(v) || v > bv) {
            bv = v;
            bi = i;
          }
        }
        out[0].data[static_cast<size_t>(o * g.inner + j)] = static_cast<double>(bi);
      }
  };
  s.cases = argmax_cases;
  s.bench_case = [name](const std::map<std::string, std::string>& kv, DType t) {
    return reduce_bench_case(name, kv, t, true);
  };
  r.add_op(std::move(s));

  ops::add_isa_kernels(r, name,
                       ops::PerIsa<reduce::ArgmaxFn>{reduce::argmax_avx512(), reduce::argmax_avx2(),
                                                     reduce::argmax_scalar()},
                       [min](reduce::ArgmaxFn fn, Isa) {
                         return [fn, min](const OpCall& call,
                                          std::string* why) -> std::unique_ptr<KernelInstance> {
                           const ArgmaxGeom g = argmax_geom(call);
                           if (g.n >= (int64_t{1} << 24)) {  // lane indices are held exactly in f32
                             if (why) *why = "axis longer than 2^24 (indices kept in f32 lanes)";
                             return nullptr;
                           }
                           return std::make_unique<ArgmaxKernel>(fn, min, g);
                         };
                       });
}

}  // namespace

void register_reduce_ops(Registry& r) {
  const ReduceDef defs[] = {
      {"sum", Kind::sum, "sum"},
      {"mean", Kind::mean, "arithmetic mean (sum / count; NaN for an empty reduction)"},
      {"max", Kind::max, "maximum (NaN if any element is NaN)"},
      {"min", Kind::min, "minimum (NaN if any element is NaN)"},
      {"prod", Kind::prod, "product (1 for an empty reduction)"},
      {"sum_square", Kind::sum_square, "sum of squares"},
      {"l1", Kind::l1, "sum of absolute values"},
      {"l2", Kind::l2, "Euclidean norm: sqrt of the sum of squares"}};
  for (const ReduceDef& d : defs) add_reduce(r, d);
  add_argmax(r, false);
  add_argmax(r, true);
}

}  // namespace opsnn

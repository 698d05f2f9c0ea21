// layer_norm, rms_norm, add_layer_norm, add_rms_norm, ada_layer_norm:
// schemas, float64 references, case tables and kernel registration.
// All normalise rows of the trailing dims [axis, rank) of x.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "ops/common/bench_keys.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/norm/norm_util.h"
#include "opsnn/error.h"

namespace opsnn::norm {
namespace {

enum class Form { layer, rms, add_layer, add_rms, ada };

struct RowDef {
  const char* name;
  Form form;
  const char* doc;
  double eps;
};

bool is_rms(Form f) { return f == Form::rms || f == Form::add_rms; }
bool is_add(Form f) { return f == Form::add_layer || f == Form::add_rms; }

// Input positions (-1: the op has no such input).
struct Slots {
  int residual = -1, scale = -1, bias = -1, shift = -1;
};
Slots slots(Form f) {
  switch (f) {
    case Form::layer:
      return {-1, 1, 2, -1};
    case Form::rms:
      return {-1, 1, -1, -1};
    case Form::add_layer:
    case Form::add_rms:
      return {1, 2, 3, -1};
    case Form::ada:
      return {-1, 2, -1, 1};
  }
  return {};
}

// rows x cols view; params are [blocks, cols], row r uses block r / period.
struct Geom {
  int64_t rows = 0, cols = 1, period = 1, blocks = 1;
  Shape norm_shape;
};

// `with_shape`: fill norm_shape (infer checks the params with it); kernels
// call this in run, which must not allocate, and pass false.
Geom geom(const OpCall& call, Form f, bool with_shape = true) {
  const Shape& s = call.in(0).shape;
  Geom g;
  if (f == Form::ada) {
    g.rows = s[0] * s[1];
    g.cols = s[2];
    g.period = std::max<int64_t>(s[1], 1);
    g.blocks = s[0];
    if (with_shape) g.norm_shape = {s[0], s[2]};
    return g;
  }
  const int64_t axis = call.axis("attribute 'axis'", call.attrs.i("axis"), call.in(0).rank());
  g.rows = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d < axis)
      g.rows *= s[d];
    else {
      g.cols *= s[d];
      if (with_shape) g.norm_shape.push_back(s[d]);
    }
  }
  g.period = std::max<int64_t>(g.rows, 1);
  return g;
}

std::vector<TensorDesc> infer(const OpCall& call, Form f) {
  ops::require_float(call, 0);
  const Slots sl = slots(f);
  if (f == Form::ada) {
    ops::require_rank(call, 0, 3);
  } else {
    ops::require_rank_at_least(call, 0, 1);
  }
  (void)eps_of(call);
  const Geom g = geom(call, f);
  const std::string what = f == Form::ada ? "[B, D] of x [B, L, D]" : "x.shape[axis:]";
  if (sl.residual >= 0) {
    ops::require_same_dtype(call, static_cast<size_t>(sl.residual), 0);
    ops::require_shape(call, static_cast<size_t>(sl.residual), call.in(0).shape);
  }
  for (int i : {sl.scale, sl.bias, sl.shift})
    if (i >= 0 && call.has_input(static_cast<size_t>(i)))
      require_param(call, static_cast<size_t>(i), g.norm_shape, what);
  std::vector<TensorDesc> out{TensorDesc(call.in(0).dtype, call.in(0).shape)};
  if (is_add(f)) out.push_back(TensorDesc(call.in(0).dtype, call.in(0).shape));
  return out;
}

void reference(const OpCall& call, Form f, const std::vector<RefTensor>& in,
               std::vector<RefTensor>& out) {
  const Slots sl = slots(f);
  const Geom g = geom(call, f);
  const double eps = call.attrs.f("eps");
  auto has = [&](int i) { return i >= 0 && call.has_input(static_cast<size_t>(i)); };
  std::vector<double> v(static_cast<size_t>(g.cols));
  for (int64_t r = 0; r < g.rows; ++r) {
    const size_t off = static_cast<size_t>(r * g.cols);
    for (size_t j = 0; j < v.size(); ++j) {
      v[j] = in[0].data[off + j] +
             (has(sl.residual) ? in[static_cast<size_t>(sl.residual)].data[off + j] : 0.0);
      if (is_add(f)) out[1].data[off + j] = v[j];
    }
    double mean = 0, scale;
    if (is_rms(f)) {
      double ss = 0;
      for (double a : v) ss += a * a;
      scale = 1 / std::sqrt(ss / static_cast<double>(g.cols) + eps);
    } else {
      for (double a : v) mean += a;
      mean /= static_cast<double>(g.cols);
      double var = 0;
      for (double a : v) var += (a - mean) * (a - mean);
      scale = 1 / std::sqrt(var / static_cast<double>(g.cols) + eps);
    }
    const size_t poff = static_cast<size_t>((r / g.period) * g.cols);
    for (size_t j = 0; j < v.size(); ++j) {
      double gm = has(sl.scale) ? in[static_cast<size_t>(sl.scale)].data[poff + j] : 1.0;
      if (f == Form::ada) gm += 1.0;  // y = LN(x) * (1 + scale) + shift
      const double bt = has(sl.bias)    ? in[static_cast<size_t>(sl.bias)].data[poff + j]
                        : has(sl.shift) ? in[static_cast<size_t>(sl.shift)].data[poff + j]
                                        : 0.0;
      out[0].data[off + j] = (v[j] - mean) * scale * gm + bt;
    }
  }
}

// Inputs of one case: x of `shape`, params as the op wants them.
std::vector<TensorDesc> case_inputs(Form f, DType t, const TensorDesc& x, int64_t axis, bool scale,
                                    bool bias) {
  const Shape& s = x.shape;
  if (f == Form::ada) return {x, TensorDesc(t, {s[0], s[2]}), TensorDesc(t, {s[0], s[2]})};
  const int64_t a = axis < 0 ? axis + static_cast<int64_t>(s.size()) : axis;
  const Shape ns(s.begin() + a, s.end());
  std::vector<TensorDesc> in{x};
  if (is_add(f)) in.push_back(TensorDesc(t, s));
  const bool need_scale = is_add(f);
  in.push_back(scale || need_scale ? TensorDesc(t, ns) : TensorDesc::none());
  if (f != Form::rms) in.push_back(bias ? TensorDesc(t, ns) : TensorDesc::none());
  return in;
}

std::vector<CheckCase> cases(Form f, DType t) {
  const ValueRange xr{-3, 3};
  std::vector<ValueRange> ranges(5, xr);
  if (f == Form::ada) ranges = {xr, {-1, 1}, {-1, 1}};
  std::vector<CheckCase> cs;
  auto add = [&](const std::string& name, const TensorDesc& x, Attrs attrs, bool scale, bool bias,
                 double tol = 1, std::vector<ValueRange> rg = {}) {
    const int64_t axis = attrs.has("axis") ? attrs.i("axis") : -1;
    cs.push_back({name, case_inputs(f, t, x, axis, scale, bias), std::move(attrs),
                  rg.empty() ? ranges : rg, tol});
  };
  const bool ada = f == Form::ada;
  for (int64_t cols : {1, 7, 15, 16, 17, 33, 768, 1000, 4099})
    for (int64_t rows : {0, 1, 5}) {
      const Shape s = ada ? Shape{2, rows, cols} : Shape{rows, cols};
      add(shape_str(s), TensorDesc(t, s), {}, true, true);
    }
  add("[64,1000] (threads split rows)", TensorDesc(t, ada ? Shape{4, 16, 1000} : Shape{64, 1000}),
      {}, true, true);
  add("row 20000 (several stats blocks)", TensorDesc(t, ada ? Shape{1, 2, 20000} : Shape{2, 20000}),
      {}, true, true);
  std::vector<ValueRange> offset = ranges;
  offset[0] = {100, 103};
  add("mean 100 var 0.75 [8,1000]", TensorDesc(t, ada ? Shape{2, 4, 1000} : Shape{8, 1000}), {},
      true, true, 5, offset);
  if (t == DType::f32 && f != Form::ada)  // 16 MiB output: non-temporal stores
    add("[4096,1024] (streamed stores)", TensorDesc(t, {4096, 1024}), {}, true, true);
  add("eps 0.1 [3,100]", TensorDesc(t, ada ? Shape{1, 3, 100} : Shape{3, 100}), {{"eps", 0.1}},
      true, true);
  if (ada) {
    // x [B, L, D] laid out as [B, D, L] in memory.
    add("strided [2,7,5] (D,L swapped)", TensorDesc(t, {2, 7, 5}, {35, 1, 7}), {}, true, true);
    add("[3,0,8] (L = 0)", TensorDesc(t, {3, 0, 8}), {}, true, true);
    return cs;
  }
  add("[0]", TensorDesc(t, {0}), {}, true, true);
  add("[1]", TensorDesc(t, {1}), {}, true, true);
  add("[4,0] (cols = 0)", TensorDesc(t, {4, 0}), {}, true, true);
  add("no scale, no bias [5,33]", TensorDesc(t, {5, 33}), {}, false, false);
  add("scale only [5,33]", TensorDesc(t, {5, 33}), {}, true, false);
  if (f != Form::rms) add("bias only [5,33]", TensorDesc(t, {5, 33}), {}, false, true);
  add("axis -2 [4,6,10]", TensorDesc(t, {4, 6, 10}), {{"axis", int64_t{-2}}}, true, true);
  add("axis 0 [3,5]", TensorDesc(t, {3, 5}), {{"axis", int64_t{0}}}, true, true);
  add("[2,3,1000]", TensorDesc(t, {2, 3, 1000}), {}, true, true);
  add("strided[33,17]^T", ops::transposed_desc(t, 33, 17), {}, true, true);
  return cs;
}

CheckCase bench_case(Form f, const std::string& op, const std::map<std::string, std::string>& kv,
                     DType t) {
  ops::CaseKeys keys(op, kv);
  const int64_t rows = keys.i("rows", 16384), cols = keys.i("cols", 1024),
                b = f == Form::ada ? keys.i("b", 1) : 1;
  keys.done();
  const TensorDesc x =
      f == Form::ada ? TensorDesc(t, {b, rows, cols}) : TensorDesc(t, {rows, cols});
  CheckCase c{"bench", case_inputs(f, t, x, -1, true, true), {}, {}};
  c.ranges.assign(c.inputs.size(), ValueRange{-3, 3});
  return c;
}

void add_row_op(Registry& reg, const RowDef& d) {
  const Form f = d.form;
  OpSchema s;
  s.name = d.name;
  s.family = "norm";
  s.doc = d.doc;
  switch (f) {
    case Form::layer:
      s.inputs = {{"x", "input"},
                  {"scale", "gamma, shape x.shape[axis:]", true},
                  {"bias", "beta, shape x.shape[axis:]", true}};
      break;
    case Form::rms:
      s.inputs = {{"x", "input"}, {"scale", "gamma, shape x.shape[axis:]", true}};
      break;
    case Form::add_layer:
    case Form::add_rms:
      s.inputs = {{"x", "input"},
                  {"residual", "added to x, same shape and dtype"},
                  {"scale", "gamma, shape x.shape[axis:]"},
                  {"bias", "beta, shape x.shape[axis:]", true}};
      break;
    case Form::ada:
      s.inputs = {{"x", "[B, L, D]"},
                  {"shift", "[B, D], added after the scaling"},
                  {"scale", "[B, D], y = LN(x) * (1 + scale) + shift"}};
      break;
  }
  s.outputs = {{"y", "normalised, same shape and dtype as x"}};
  if (is_add(f)) s.outputs.push_back({"sum", "x + residual, same shape and dtype as x"});
  if (f != Form::ada)
    s.attrs.push_back({"axis", AttrType::i64, int64_t{-1}, "normalise over dims [axis, rank)"});
  s.attrs.push_back({"eps", AttrType::f64, d.eps, "added to the variance (mean square for rms)"});
  set_norm_schema(s, f, infer, reference, cases, bench_case);
  reg.add_op(std::move(s));

  ops::add_isa_kernels(reg, d.name, isa_fns(), [f](const Fns& fns, Isa) {
    return simple_kernel(
        [f, fn = fns.rows](const OpCall& call, const Tensor* in, Tensor* out, void* ws) {
          const Slots sl = slots(f);
          const Geom g = geom(call, f, false);
          const int64_t np = g.blocks * g.cols;
          float* gamma = static_cast<float*>(ws);
          float* beta = gamma + floats_bytes(np) / sizeof(float);
          auto has = [&](int i) { return i >= 0 && call.has_input(static_cast<size_t>(i)); };
          if (has(sl.scale)) {
            to_f32(in[sl.scale], gamma);
            if (f == Form::ada)
              for (int64_t i = 0; i < np; ++i) gamma[i] += 1.0f;
          } else {
            std::fill(gamma, gamma + np, 1.0f);
          }
          if (has(sl.bias))
            to_f32(in[sl.bias], beta);
          else if (has(sl.shift))
            to_f32(in[sl.shift], beta);
          else
            std::fill(beta, beta + np, 0.0f);
          RowArgs a;
          a.t = in[0].dtype();
          a.x = in[0].data();
          a.residual = sl.residual >= 0 ? in[sl.residual].data() : nullptr;
          a.y = out[0].data();
          a.sum_out = is_add(f) ? out[1].data() : nullptr;
          a.rows = g.rows;
          a.cols = g.cols;
          a.gamma = gamma;
          a.beta = beta;
          a.period = g.period;
          a.eps = static_cast<float>(call.attrs.f("eps"));
          a.rms = is_rms(f);
          fn(a);
        },
        nullptr,
        [f](const OpCall& call) {
          const Geom g = geom(call, f, false);
          return 2 * floats_bytes(g.blocks * g.cols);
        });
  });
}

}  // namespace

void register_row_norms(Registry& r) {
  const RowDef defs[] = {
      {"layer_norm", Form::layer,
       "(x - mean) / sqrt(var + eps) * scale + bias over dims [axis, rank)", 1e-5},
      {"rms_norm", Form::rms, "x / sqrt(mean(x^2) + eps) * scale over dims [axis, rank)", 1e-6},
      {"add_layer_norm", Form::add_layer,
       "s = x + residual; y = layer_norm(s) * scale + bias; returns y and s", 1e-5},
      {"add_rms_norm", Form::add_rms,
       "s = x + residual; y = rms_norm(s) * scale (+ bias); returns y and s", 1e-6},
      {"ada_layer_norm", Form::ada,
       "DiT: y = layer_norm(x, no affine) * (1 + scale[b]) + shift[b], x [B, L, D]", 1e-6},
  };
  for (const RowDef& d : defs) add_row_op(r, d);
}

}  // namespace opsnn::norm

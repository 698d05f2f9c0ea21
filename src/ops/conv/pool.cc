// Pooling ops: max_pool2d, max_pool2d_with_indices, avg_pool2d,
// global_avg_pool, global_max_pool, adaptive_avg_pool2d. Schemas, shape
// inference, float64 references, case tables and kernel registration.
#include "ops/conv/pool.h"

#include <cmath>
#include <map>
#include <string>

#include "ops/common/bench_keys.h"
#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "ops/conv/conv_family.h"
#include "ops/conv/conv_geom.h"

namespace opsnn::conv {
namespace {

enum class Kind { max, max_idx, avg, gmax, gavg, adaptive };

bool is_max(Kind k) { return k == Kind::max || k == Kind::max_idx || k == Kind::gmax; }

// Per output index of one dim: the window's first input index, tap count and
// step, and whether taps in the padding count for the average.
struct Span {
  int64_t start = 0, taps = 1, step = 1, lo = 0, hi = 0;  // padded range [lo, hi)
};

struct Geo {
  bool cl = false;
  int r = 2;
  int64_t n = 0, c = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  Window w;  // for max/avg
};

Geo geometry(const OpCall& call, Kind kind) {
  Geo g;
  const Shape& xs = call.in(0).shape;
  g.cl = kind == Kind::max_idx ? false : channels_last(call);
  g.r = static_cast<int>(xs.size()) - 2;
  g.n = xs[0];
  g.c = g.cl ? xs.back() : xs[1];
  const std::vector<int64_t> sp = spatial_dims(xs, g.cl);
  for (int i = 0; i < g.r; ++i) g.in[3 - g.r + i] = sp[static_cast<size_t>(i)];
  if (kind == Kind::max || kind == Kind::max_idx || kind == Kind::avg) {
    const std::vector<int64_t>& k = call.attrs.ints("kernel_shape");
    if (static_cast<int>(k.size()) != g.r)
      call.fail("attribute 'kernel_shape'", std::to_string(g.r) + " values",
                std::to_string(k.size()) + " values");
    for (int64_t v : k)
      if (v < 1) call.fail("attribute 'kernel_shape'", "values >= 1", std::to_string(v));
    g.w = make_window(call, sp, k, call.attrs.i("ceil_mode") != 0);
    for (int j = 0; j < 3; ++j) {
      g.out[j] = g.w.out[j];
      const int64_t span = (g.w.k[j] - 1) * g.w.d[j] + 1;
      if (g.w.pb[j] >= span || g.w.pe[j] >= span)
        call.fail("attribute 'pads'",
                  "pads smaller than the (dilated) kernel " + std::to_string(span),
                  std::to_string(std::max(g.w.pb[j], g.w.pe[j])));
    }
  } else if (kind == Kind::adaptive) {
    const std::vector<int64_t>& os = call.attrs.ints("output_size");
    if (static_cast<int>(os.size()) != g.r)
      call.fail("attribute 'output_size'", std::to_string(g.r) + " values",
                std::to_string(os.size()) + " values");
    for (int i = 0; i < g.r; ++i) {
      if (os[static_cast<size_t>(i)] < 1)
        call.fail("attribute 'output_size'", "values >= 1",
                  std::to_string(os[static_cast<size_t>(i)]));
      g.out[3 - g.r + i] = os[static_cast<size_t>(i)];
    }
  }
  return g;
}

Span span_of(const Geo& g, Kind kind, int j, int64_t o) {
  Span s;
  if (kind == Kind::gmax || kind == Kind::gavg) {
    s.taps = g.in[j];
    s.hi = g.in[j];
  } else if (kind == Kind::adaptive) {
    s.start = o * g.in[j] / g.out[j];
    const int64_t end = ((o + 1) * g.in[j] + g.out[j] - 1) / g.out[j];
    s.taps = end - s.start;
    s.hi = g.in[j];
  } else {
    s.start = o * g.w.s[j] - g.w.pb[j];
    s.taps = g.w.k[j];
    s.step = g.w.d[j];
    s.lo = -g.w.pb[j];
    s.hi = g.in[j] + g.w.pe[j];
  }
  return s;
}

std::vector<TensorDesc> infer(const OpCall& call, Kind kind) {
  ops::require_float(call, 0);
  if (kind == Kind::gmax || kind == Kind::gavg) {
    ops::require_rank_at_least(call, 0, 3);
    if (call.in(0).rank() > 5) ops::require_rank(call, 0, 5);
  } else {
    ops::require_rank(call, 0, 4);
  }
  const Geo g = geometry(call, kind);
  // A window over an empty spatial extent has no value (no max, no mean).
  if (g.n > 0 && g.c > 0)
    for (int i = 3 - g.r; i < 3; ++i)
      if (g.in[i] == 0)
        call.fail(ops::input_name(call, 0), "spatial dims >= 1 (a pool window needs an element)",
                  shape_str(call.in(0).shape));
  Shape out{g.n};
  if (!g.cl) out.push_back(g.c);
  for (int i = 3 - g.r; i < 3; ++i) out.push_back(g.out[i]);
  if (g.cl) out.push_back(g.c);
  std::vector<TensorDesc> o{TensorDesc(call.in(0).dtype, out)};
  if (kind == Kind::max_idx) o.push_back(TensorDesc(DType::i64, out));
  return o;
}

void reference(const OpCall& call, Kind kind, const std::vector<RefTensor>& in,
               std::vector<RefTensor>& out) {
  const Geo g = geometry(call, kind);
  const bool incl = kind == Kind::avg && call.attrs.i("count_include_pad") != 0;
  const int64_t plane = g.in[0] * g.in[1] * g.in[2], outs = g.out[0] * g.out[1] * g.out[2];
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t o = 0; o < outs; ++o) {
        const int64_t oi[3] = {o / (g.out[1] * g.out[2]), o / g.out[2] % g.out[1], o % g.out[2]};
        Span sp[3];
        for (int j = 0; j < 3; ++j) sp[j] = span_of(g, kind, j, oi[j]);
        double acc = is_max(kind) ? -INFINITY : 0.0, cnt = 0;
        int64_t arg = -1;
        for (int64_t a = 0; a < sp[0].taps; ++a)
          for (int64_t b = 0; b < sp[1].taps; ++b)
            for (int64_t e = 0; e < sp[2].taps; ++e) {
              const int64_t i[3] = {sp[0].start + a * sp[0].step, sp[1].start + b * sp[1].step,
                                    sp[2].start + e * sp[2].step};
              bool valid = true, in_pad = true;
              for (int j = 0; j < 3; ++j) {
                valid = valid && i[j] >= 0 && i[j] < g.in[j];
                in_pad = in_pad && i[j] >= sp[j].lo && i[j] < sp[j].hi;
              }
              if ((incl && in_pad) || (!incl && valid)) cnt += 1;
              if (!valid) continue;
              const int64_t pix = (i[0] * g.in[1] + i[1]) * g.in[2] + i[2];
              const double v = in[0].data[static_cast<size_t>(g.cl ? (n * plane + pix) * g.c + c
                                                                   : (n * g.c + c) * plane + pix)];
              if (!is_max(kind)) {
                acc += v;
              } else if (v > acc || std::isnan(v) || arg < 0) {
                acc = v;
                arg = pix;
              }
            }
        if (!is_max(kind)) acc /= cnt;
        const size_t k =
            static_cast<size_t>(g.cl ? (n * outs + o) * g.c + c : (n * g.c + c) * outs + o);
        out[0].data[k] = acc;
        if (kind == Kind::max_idx) out[1].data[k] = static_cast<double>(arg);
      }
}

// PoolDim::run_*: every window at a constant stride of 1 or 2 from the
// first, unit steps, one width; the identity padding (before the row, and
// after it up to the last window's end plus the widest vector) within kRunPad.
void set_run(const Geo& g, Kind kind, PoolDim& d) {
  const Span s0 = span_of(g, kind, 2, 0);
  const int64_t stride = d.out > 1 ? span_of(g, kind, 2, 1).start - s0.start : 1;
  if (stride != 1 && stride != 2) return;
  for (int64_t o = 0; o < d.out; ++o) {
    const Span s = span_of(g, kind, 2, o);
    if ((s.step != 1 && s.taps > 1) || s.taps != s0.taps || s.start != s0.start + stride * o)
      return;
  }
  const int64_t end = s0.start + stride * d.out + s0.taps + 16;  // 16: AVX-512's lanes
  if (s0.start < -kRunPad || end > d.in + kRunPad) return;
  d.run_stride = stride;
  d.run_start = s0.start;
  d.run_taps = s0.taps;
}

PoolPlan plan_of(const OpCall& call, Kind kind) {
  const Geo g = geometry(call, kind);
  PoolPlan p;
  p.cl = g.cl;
  p.is_max = is_max(kind);
  p.include_pad = kind == Kind::avg && call.attrs.i("count_include_pad") != 0;
  p.indices = kind == Kind::max_idx;
  p.n = g.n;
  p.c = g.c;
  p.t = call.in(0).dtype;
  // An empty output needs no tables (and its other dims may be huge).
  if (call.out(0).numel() == 0) return p;
  for (int j = 0; j < 3; ++j) {
    PoolDim& d = p.dim[j];
    d.in = g.in[j];
    d.out = g.out[j];
    d.first.push_back(0);
    for (int64_t o = 0; o < d.out; ++o) {
      const Span s = span_of(g, kind, j, o);
      int64_t cnt = 0;
      for (int64_t t = 0; t < s.taps; ++t) {
        const int64_t i = s.start + t * s.step;
        const bool valid = i >= 0 && i < d.in;
        if (valid) d.idx.push_back(i);
        if (p.include_pad ? (i >= s.lo && i < s.hi) : valid) ++cnt;
      }
      d.first.push_back(static_cast<int64_t>(d.idx.size()));
      d.count.push_back(cnt);
    }
    for (int64_t o = 0; o < d.out; ++o) d.win = std::max(d.win, d.first[o + 1] - d.first[o]);
    if (j == 2) set_run(g, kind, d);
    // The gather tables, where the windows are not a run.
    if (j == 2 && d.run_stride == 0 && d.in < INT32_MAX && d.win <= 64 &&
        d.out <= INT32_MAX / std::max<int64_t>(d.win, 1)) {
      d.idx_tm.assign(static_cast<size_t>(d.win * d.out), static_cast<int32_t>(d.in));
      for (int64_t o = 0; o < d.out; ++o)
        for (int64_t t = 0; t < d.first[o + 1] - d.first[o]; ++t)
          d.idx_tm[static_cast<size_t>(t * d.out + o)] =
              static_cast<int32_t>(d.idx[static_cast<size_t>(d.first[o] + t)]);
    }
  }
  return p;
}

using IL = std::vector<int64_t>;

std::vector<CheckCase> cases(Kind kind, DType t) {
  std::vector<CheckCase> cs;
  auto add = [&](const std::string& name, Shape x, Attrs a) {
    CheckCase c{name, {TensorDesc(t, std::move(x))}, std::move(a), {{-3, 3}}};
    cs.push_back(std::move(c));
  };
  const std::string nhwc = "NHWC";
  if (kind == Kind::max || kind == Kind::max_idx || kind == Kind::avg) {
    const bool mx = kind != Kind::avg;
    const bool cl_ok = kind != Kind::max_idx;
    add("2x2 stride 2 [1,3,8,8]", {1, 3, 8, 8},
        {{"kernel_shape", IL{2, 2}}, {"strides", IL{2, 2}}});
    add("3x3 stride 2 pad 1 [2,5,33,33]", {2, 5, 33, 33},
        {{"kernel_shape", IL{3, 3}}, {"strides", IL{2, 2}}, {"pads", IL{1, 1, 1, 1}}});
    add("3x3 stride 2 pad 1 ceil [1,4,8,7]", {1, 4, 8, 7},
        {{"kernel_shape", IL{3, 3}},
         {"strides", IL{2, 2}},
         {"pads", IL{1, 1, 1, 1}},
         {"ceil_mode", int64_t{1}}});
    add("2x3 ceil stride 2 [1,2,7,7]", {1, 2, 7, 7},
        {{"kernel_shape", IL{2, 3}}, {"strides", IL{2, 2}}, {"ceil_mode", int64_t{1}}});
    add("1x1 [1,3,1,1]", {1, 3, 1, 1}, {{"kernel_shape", IL{1, 1}}});
    add("SAME_UPPER 3x3 stride 2 [1,3,9,8]", {1, 3, 9, 8},
        {{"kernel_shape", IL{3, 3}},
         {"strides", IL{2, 2}},
         {"auto_pad", std::string("SAME_UPPER")}});
    add("SAME_LOWER 2x2 [1,2,5,5]", {1, 2, 5, 5},
        {{"kernel_shape", IL{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}});
    add("VALID 3x3 [1,2,7,7]", {1, 2, 7, 7},
        {{"kernel_shape", IL{3, 3}}, {"auto_pad", std::string("VALID")}});
    if (mx)
      add("3x3 dilation 2 pad 2 [1,3,11,9]", {1, 3, 11, 9},
          {{"kernel_shape", IL{3, 3}}, {"dilations", IL{2, 2}}, {"pads", IL{2, 2, 1, 2}}});
    if (!mx) {
      add("3x3 pad 1 count_include_pad [1,3,7,7]", {1, 3, 7, 7},
          {{"kernel_shape", IL{3, 3}},
           {"pads", IL{1, 1, 1, 1}},
           {"count_include_pad", int64_t{1}}});
      add("3x3 stride 2 pad 1 ceil count_include_pad [1,2,8,8]", {1, 2, 8, 8},
          {{"kernel_shape", IL{3, 3}},
           {"strides", IL{2, 2}},
           {"pads", IL{1, 1, 1, 1}},
           {"ceil_mode", int64_t{1}},
           {"count_include_pad", int64_t{1}}});
    }
    if (cl_ok) {
      add("NHWC 3x3 stride 2 pad 1 [2,9,9,19]", {2, 9, 9, 19},
          {{"kernel_shape", IL{3, 3}},
           {"strides", IL{2, 2}},
           {"pads", IL{1, 1, 1, 1}},
           {"layout", nhwc}});
      add("NHWC 2x2 stride 2 [1,8,8,320]", {1, 8, 8, 320},
          {{"kernel_shape", IL{2, 2}}, {"strides", IL{2, 2}}, {"layout", nhwc}});
    }
    // Rows of many outputs: the channels-first window runs (stride 1 and 2,
    // padded at both ends, ceil mode) over whole vectors and a tail.
    add("3x3 stride 1 pad 1 [1,3,6,37]", {1, 3, 6, 37},
        {{"kernel_shape", IL{3, 3}}, {"pads", IL{1, 1, 1, 1}}});
    add("5x5 stride 1 pad 2 [1,2,9,40]", {1, 2, 9, 40},
        {{"kernel_shape", IL{5, 5}}, {"pads", IL{2, 2, 2, 2}}});
    add("2x2 stride 2 [1,3,6,70]", {1, 3, 6, 70},
        {{"kernel_shape", IL{2, 2}}, {"strides", IL{2, 2}}});
    add("3x3 stride 2 pad 1 ceil [1,2,5,40]", {1, 2, 5, 40},
        {{"kernel_shape", IL{3, 3}},
         {"strides", IL{2, 2}},
         {"pads", IL{1, 1, 1, 1}},
         {"ceil_mode", int64_t{1}}});
    add("empty batch [0,3,4,4]", {0, 3, 4, 4}, {{"kernel_shape", IL{2, 2}}});
  } else if (kind == Kind::adaptive) {
    add("[1,3,7,7]->3x3", {1, 3, 7, 7}, {{"output_size", IL{3, 3}}});
    add("[2,4,33,17]->5x4", {2, 4, 33, 17}, {{"output_size", IL{5, 4}}});
    add("[1,2,4,4]->7x5 (upsampling)", {1, 2, 4, 4}, {{"output_size", IL{7, 5}}});
    add("NHWC [1,9,9,17]->1x1", {1, 9, 9, 17}, {{"output_size", IL{1, 1}}, {"layout", nhwc}});
    add("[1,3,8,70]->4x35 (windows at stride 2)", {1, 3, 8, 70}, {{"output_size", IL{4, 35}}});
    add("[1,2,5,40]->5x40 (identity)", {1, 2, 5, 40}, {{"output_size", IL{5, 40}}});
  } else {
    add("[2,5,7,7]", {2, 5, 7, 7}, {});
    add("[1,3,33]", {1, 3, 33}, {});
    add("[1,2,3,4,5]", {1, 2, 3, 4, 5}, {});
    add("NHWC [2,9,9,19]", {2, 9, 9, 19}, {{"layout", nhwc}});
    add("[1,4,1,1]", {1, 4, 1, 1}, {});
  }
  return cs;
}

struct Def {
  const char* name;
  Kind kind;
  const char* doc;
};

void add_pool_op(Registry& reg, const Def& d) {
  const Kind kind = d.kind;
  OpSchema s;
  s.name = d.name;
  s.family = "pool";
  s.doc = d.doc;
  s.inputs = {{"x", "[N, C, spatial...] (NCHW) or [N, spatial..., C] (NHWC)"}};
  s.outputs = {{"y", "pooled, dtype of x"}};
  if (kind == Kind::max_idx)
    s.outputs.push_back({"indices", "i64: flat index of the max within its (n, c) input plane"});
  if (kind == Kind::max || kind == Kind::max_idx || kind == Kind::avg) {
    s.attrs = window_attrs(kind != Kind::avg);
    s.attrs.push_back({"kernel_shape", AttrType::i64s, std::nullopt, "window per spatial dim"});
    s.attrs.push_back({"ceil_mode", AttrType::i64, int64_t{0}, "1: output sizes rounded up"});
    if (kind == Kind::avg)
      s.attrs.push_back(
          {"count_include_pad", AttrType::i64, int64_t{0}, "1: the divisor counts padding taps"});
  }
  if (kind == Kind::adaptive)
    s.attrs.push_back({"output_size", AttrType::i64s, std::nullopt, "[OH, OW]"});
  if (kind != Kind::max_idx) s.attrs.push_back(layout_attr());
  s.dtypes = ops::kFloatDTypes;
  s.infer = [kind](const OpCall& call) { return infer(call, kind); };
  s.reference = [kind](const OpCall& call, const std::vector<RefTensor>& in,
                       std::vector<RefTensor>& out) { reference(call, kind, in, out); };
  s.cases = [kind](DType t) { return cases(kind, t); };
  s.tolerance = default_tolerance;
  reg.add_op(std::move(s));
  ops::add_isa_kernels(reg, d.name,
                       ops::PerIsa<PoolFn>{pool_fn_avx512(), pool_fn_avx2(), pool_fn_scalar()},
                       [kind](PoolFn fn, Isa) -> KernelFactory {
                         return [kind, fn](const OpCall& call, std::string*) {
                           struct Inst : KernelInstance {
                             PoolPlan plan;
                             PoolFn fn = nullptr;
                             void run(const Tensor* in, Tensor* out, void*) override {
                               if (out[0].numel() == 0) return;
                               fn(plan, in[0].data(), out[0].data(),
                                  plan.indices ? out[1].data_as<int64_t>() : nullptr);
                             }
                           };
                           auto inst = std::make_unique<Inst>();
                           inst->plan = plan_of(call, kind);
                           inst->fn = fn;
                           return std::unique_ptr<KernelInstance>(std::move(inst));
                         };
                       });
}

}  // namespace

void register_pool(Registry& r) {
  const Def defs[] = {
      {"max_pool2d", Kind::max, "ONNX MaxPool (2-D); NaN propagates as in PyTorch"},
      {"max_pool2d_with_indices", Kind::max_idx,
       "max_pool2d (NCHW) that also returns PyTorch's indices"},
      {"avg_pool2d", Kind::avg, "ONNX AveragePool (2-D)"},
      {"global_avg_pool", Kind::gavg, "mean over all spatial dims (keeps them as size 1)"},
      {"global_max_pool", Kind::gmax, "max over all spatial dims (keeps them as size 1)"},
      {"adaptive_avg_pool2d", Kind::adaptive,
       "PyTorch adaptive_avg_pool2d: output o averages [floor(o*in/out), ceil((o+1)*in/out))"},
  };
  for (const Def& d : defs) add_pool_op(r, d);
}

}  // namespace opsnn::conv

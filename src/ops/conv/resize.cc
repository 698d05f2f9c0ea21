// resize: ONNX Resize (nearest, linear, cubic) over the spatial dims of
// [N, C, spatial...] (or channels last), with scales or sizes as attributes.
// The per-dim taps and weights (resize_taps) are computed once at create;
// the float64 reference applies the same taps in double.
#include "ops/conv/resize.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "ops/conv/conv_family.h"
#include "ops/conv/conv_geom.h"

namespace opsnn::conv {
namespace {

struct Geo {
  bool cl = false;
  int r = 2;
  int64_t n = 0, c = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  double scale[3] = {1, 1, 1};
};

Geo geometry(const OpCall& call) {
  Geo g;
  const Shape& xs = call.in(0).shape;
  g.cl = channels_last(call);
  g.r = static_cast<int>(xs.size()) - 2;
  g.n = xs[0];
  g.c = g.cl ? xs.back() : xs[1];
  const std::vector<int64_t> sp = spatial_dims(xs, g.cl);
  const std::vector<double> scales = call.attrs.floats("scales");
  const std::vector<int64_t>& sizes = call.attrs.ints("sizes");
  if (scales.empty() == sizes.empty())
    call.fail("attributes 'scales' / 'sizes'", "exactly one of them",
              scales.empty() ? "neither" : "both");
  const size_t want = static_cast<size_t>(g.r);
  if (!scales.empty() && scales.size() != want)
    call.fail("attribute 'scales'", std::to_string(g.r) + " values (spatial dims)",
              std::to_string(scales.size()) + " values");
  if (!sizes.empty() && sizes.size() != want)
    call.fail("attribute 'sizes'", std::to_string(g.r) + " values (spatial dims)",
              std::to_string(sizes.size()) + " values");
  for (int i = 0; i < g.r; ++i) {
    const int j = 3 - g.r + i;
    g.in[j] = sp[static_cast<size_t>(i)];
    if (!scales.empty()) {
      const double s = scales[static_cast<size_t>(i)];
      if (!(s > 0) || !std::isfinite(s))
        call.fail("attribute 'scales'", "finite values > 0", std::to_string(s));
      g.scale[j] = s;
      g.out[j] = static_cast<int64_t>(std::floor(static_cast<double>(g.in[j]) * s));
    } else {
      g.out[j] = sizes[static_cast<size_t>(i)];
      g.scale[j] = static_cast<double>(g.out[j]) / static_cast<double>(g.in[j]);
    }
    if (g.out[j] < 1)
      call.fail("output size", "each spatial output size >= 1",
                std::to_string(g.out[j]) + " in spatial dim " + std::to_string(i));
    if (g.in[j] < 1) call.fail("x", "spatial sizes >= 1", shape_str(xs));
  }
  return g;
}

struct Modes {
  std::string mode, coord, nearest;
  double a = -0.75;
  bool exclude_outside = false;
  std::vector<double> roi;
};

Modes modes_of(const OpCall& call, int r) {
  Modes m;
  m.mode = call.attrs.s("mode");
  m.coord = call.attrs.s("coordinate_transformation_mode");
  m.nearest = call.attrs.s("nearest_mode");
  m.a = call.attrs.f("cubic_coeff_a");
  m.exclude_outside = call.attrs.i("exclude_outside") != 0;
  m.roi = call.attrs.floats("roi");
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    call.fail("attribute 'mode'", "nearest|linear|cubic", "'" + m.mode + "'");
  if (m.coord != "half_pixel" && m.coord != "align_corners" && m.coord != "asymmetric" &&
      m.coord != "pytorch_half_pixel" && m.coord != "tf_crop_and_resize")
    call.fail("attribute 'coordinate_transformation_mode'",
              "half_pixel|align_corners|asymmetric|pytorch_half_pixel|tf_crop_and_resize",
              "'" + m.coord + "'");
  if (m.nearest != "round_prefer_floor" && m.nearest != "round_prefer_ceil" &&
      m.nearest != "floor" && m.nearest != "ceil")
    call.fail("attribute 'nearest_mode'", "round_prefer_floor|round_prefer_ceil|floor|ceil",
              "'" + m.nearest + "'");
  if (m.coord == "tf_crop_and_resize" && m.roi.size() != static_cast<size_t>(2 * r))
    call.fail("attribute 'roi'",
              std::to_string(2 * r) + " values (starts, ends) for tf_crop_and_resize",
              std::to_string(m.roi.size()) + " values");
  for (const double v : m.roi)
    if (!std::isfinite(v)) call.fail("attribute 'roi'", "finite values", std::to_string(v));
  return m;
}

std::vector<double> cubic_coeffs(double t, double A) {
  return {((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A,
          ((A + 2) * t - (A + 3)) * t * t + 1,
          ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1,
          ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A};
}

// Taps of one dim, in double (idx clamped to the input, weights summing to 1).
struct TapsD {
  int64_t taps = 1;
  std::vector<int64_t> idx;
  std::vector<double> w;
  std::vector<uint8_t> outside;
};

TapsD dim_taps(const Geo& g, const Modes& m, int j) {
  TapsD t;
  const int64_t in = g.in[j], out = g.out[j];
  const double s = g.scale[j];
  // A padding dim (of size 1, below the op's spatial rank) has one tap of
  // weight 1: the op has no such dim, so no zero-weight taps there.
  t.taps = j < 3 - g.r || m.mode == "nearest" ? 1 : m.mode == "linear" ? 2 : 4;
  const int i = j - (3 - g.r);  // index among the op's spatial dims (j >= 3 - r)
  for (int64_t o = 0; o < out; ++o) {
    double x = static_cast<double>(o);
    if (j < 3 - g.r) {
      x = 0;  // a padding dim of size 1
    } else if (m.coord == "half_pixel") {
      x = (x + 0.5) / s - 0.5;
    } else if (m.coord == "pytorch_half_pixel") {
      x = out > 1 ? (x + 0.5) / s - 0.5 : 0;
    } else if (m.coord == "align_corners") {
      x = out == 1 ? 0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
    } else if (m.coord == "asymmetric") {
      x = x / s;
    } else {  // tf_crop_and_resize
      const double st = m.roi[static_cast<size_t>(i)], en = m.roi[static_cast<size_t>(i + g.r)];
      x = out > 1 ? st * static_cast<double>(in - 1) +
                        x * (en - st) * static_cast<double>(in - 1) / static_cast<double>(out - 1)
                  : 0.5 * (st + en) * static_cast<double>(in - 1);
    }
    const bool outside = m.coord == "tf_crop_and_resize" && j >= 3 - g.r &&
                         (x < 0 || x > static_cast<double>(in - 1));
    t.outside.push_back(outside ? 1 : 0);
    // Every tap of a coordinate beyond [-3, in + 2] lies outside the input and so reads the
    // edge (or is excluded): clamping x there keeps the result and keeps the int64
    // conversions below defined (a tiny scale or a huge roi puts x near +-inf).
    x = std::clamp(x, -3.0, static_cast<double>(in) + 2);
    auto clampi = [&](int64_t v) { return std::clamp<int64_t>(v, 0, in - 1); };
    if (t.taps == 1) {
      double r;
      if (m.nearest == "floor")
        r = std::floor(x);
      else if (m.nearest == "ceil")
        r = std::ceil(x);
      else if (m.nearest == "round_prefer_floor")
        r = x == std::floor(x) + 0.5 ? std::floor(x) : std::round(x);
      else
        r = std::round(x);  // halves away from zero: up for x >= 0 (x < 0 clamps to 0 anyway)
      t.idx.push_back(clampi(static_cast<int64_t>(r)));
      t.w.push_back(1);
    } else if (m.mode == "linear") {
      // Coordinates outside the input read the edge (ONNX edge padding, PyTorch clamping).
      const double x0 = std::floor(x), f = x - x0;
      t.idx.push_back(clampi(static_cast<int64_t>(x0)));
      t.idx.push_back(clampi(static_cast<int64_t>(x0) + 1));
      t.w.push_back(1 - f);
      t.w.push_back(f);
    } else {
      const double x0 = std::floor(x), f = x - x0;
      std::vector<double> c = cubic_coeffs(f, m.a);
      double sum = 0;
      for (int k = 0; k < 4; ++k) {
        const int64_t ii = static_cast<int64_t>(x0) - 1 + k;
        if (m.exclude_outside && (ii < 0 || ii >= in)) c[static_cast<size_t>(k)] = 0;
        sum += c[static_cast<size_t>(k)];
        t.idx.push_back(clampi(ii));
      }
      for (int k = 0; k < 4; ++k)
        t.w.push_back(m.exclude_outside && sum != 0 ? c[static_cast<size_t>(k)] / sum
                                                    : c[static_cast<size_t>(k)]);
    }
  }
  return t;
}

std::vector<TensorDesc> infer(const OpCall& call) {
  ops::require_float(call, 0);
  ops::require_rank_at_least(call, 0, 3);
  if (call.in(0).rank() > 5) ops::require_rank(call, 0, 5);
  const Geo g = geometry(call);
  (void)modes_of(call, g.r);
  Shape out{g.n};
  if (!g.cl) out.push_back(g.c);
  for (int i = 3 - g.r; i < 3; ++i) out.push_back(g.out[i]);
  if (g.cl) out.push_back(g.c);
  return {TensorDesc(call.in(0).dtype, out)};
}

void reference(const OpCall& call, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
  const Geo g = geometry(call);
  const Modes m = modes_of(call, g.r);
  const TapsD T[3] = {dim_taps(g, m, 0), dim_taps(g, m, 1), dim_taps(g, m, 2)};
  const double ext = call.attrs.f("extrapolation_value");
  const int64_t plane = g.in[0] * g.in[1] * g.in[2], outs = g.out[0] * g.out[1] * g.out[2];
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t o = 0; o < outs; ++o) {
        const int64_t oi[3] = {o / (g.out[1] * g.out[2]), o / g.out[2] % g.out[1], o % g.out[2]};
        double acc = 0;
        if (T[0].outside[static_cast<size_t>(oi[0])] || T[1].outside[static_cast<size_t>(oi[1])] ||
            T[2].outside[static_cast<size_t>(oi[2])]) {
          acc = ext;
        } else {
          for (int64_t a = 0; a < T[0].taps; ++a)
            for (int64_t b = 0; b < T[1].taps; ++b)
              for (int64_t e = 0; e < T[2].taps; ++e) {
                const size_t ka = static_cast<size_t>(oi[0] * T[0].taps + a),
                             kb = static_cast<size_t>(oi[1] * T[1].taps + b),
                             ke = static_cast<size_t>(oi[2] * T[2].taps + e);
                const int64_t pix =
                    (T[0].idx[ka] * g.in[1] + T[1].idx[kb]) * g.in[2] + T[2].idx[ke];
                const double v = in[0].data[static_cast<size_t>(
                    g.cl ? (n * plane + pix) * g.c + c : (n * g.c + c) * plane + pix)];
                acc += T[0].w[ka] * T[1].w[kb] * T[2].w[ke] * v;
              }
        }
        out[0]
            .data[static_cast<size_t>(g.cl ? (n * outs + o) * g.c + c : (n * g.c + c) * outs + o)] =
            acc;
      }
}

ResizePlan plan_of(const OpCall& call) {
  const Geo g = geometry(call);
  const Modes m = modes_of(call, g.r);
  ResizePlan p;
  p.cl = g.cl;
  p.n = g.n;
  p.c = g.c;
  p.t = call.in(0).dtype;
  p.extrapolation = static_cast<float>(call.attrs.f("extrapolation_value"));
  // An empty output needs no tables (and its other dims may be huge).
  if (call.out(0).numel() == 0) return p;
  for (int j = 0; j < 3; ++j) {
    const TapsD t = dim_taps(g, m, j);
    ResizeDim& d = p.dim[j];
    d.in = g.in[j];
    d.out = g.out[j];
    d.taps = t.taps;
    d.idx = t.idx;
    d.weight.assign(t.w.begin(), t.w.end());
    if (m.coord == "tf_crop_and_resize") d.outside = t.outside;
    d.doubles = d.taps == 1 && d.out == 2 * d.in && d.outside.empty();
    for (int64_t o = 0; d.doubles && o < d.out; ++o)
      d.doubles =
          d.idx[static_cast<size_t>(o)] == o / 2 && d.weight[static_cast<size_t>(o)] == 1.0f;
    d.halves = d.taps == 2 && d.out == 2 * d.in && d.in >= 3 && d.outside.empty();
    if (d.halves) {
      const auto tap = [&](int64_t o, int k) { return static_cast<size_t>(o * 2 + k); };
      d.w_even[0] = d.weight[tap(2, 0)];
      d.w_even[1] = d.weight[tap(2, 1)];
      d.w_odd[0] = d.weight[tap(1, 0)];
      d.w_odd[1] = d.weight[tap(1, 1)];
      for (int64_t o = 1; d.halves && o + 1 < d.out; ++o) {
        const int64_t first = o % 2 ? o / 2 : o / 2 - 1;
        const float* w = o % 2 ? d.w_odd : d.w_even;
        d.halves = d.idx[tap(o, 0)] == first && d.idx[tap(o, 1)] == first + 1 &&
                   d.weight[tap(o, 0)] == w[0] && d.weight[tap(o, 1)] == w[1];
      }
    }
    if (j == 2 && d.in <= INT32_MAX && d.out <= INT32_MAX / d.taps) {
      d.idx_tm.resize(static_cast<size_t>(d.out * d.taps));
      d.weight_tm.resize(d.idx_tm.size());
      for (int64_t o = 0; o < d.out; ++o)
        for (int64_t k = 0; k < d.taps; ++k) {
          d.idx_tm[static_cast<size_t>(k * d.out + o)] =
              static_cast<int32_t>(d.idx[static_cast<size_t>(o * d.taps + k)]);
          d.weight_tm[static_cast<size_t>(k * d.out + o)] =
              d.weight[static_cast<size_t>(o * d.taps + k)];
        }
    }
  }
  return p;
}

using FL = std::vector<double>;
using IL = std::vector<int64_t>;

std::vector<CheckCase> cases(DType t) {
  std::vector<CheckCase> cs;
  auto add = [&](const std::string& name, Shape x, Attrs a) {
    cs.push_back({name, {TensorDesc(t, std::move(x))}, std::move(a), {{-3, 3}}});
  };
  const std::string coords[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"};
  for (const std::string& c : coords) {
    add("linear x2 " + c + " [1,3,7,5]", {1, 3, 7, 5},
        {{"mode", std::string("linear")},
         {"scales", FL{2, 2}},
         {"coordinate_transformation_mode", c}});
    add("linear sizes 4x9 " + c + " [1,2,7,5]", {1, 2, 7, 5},
        {{"mode", std::string("linear")},
         {"sizes", IL{4, 9}},
         {"coordinate_transformation_mode", c}});
  }
  // Linear doubling (half_pixel, pytorch_half_pixel) takes the shifted-load
  // kernels along W: rows of 37 give vectors and both ends.
  add("linear x2 [2,2,4,37]", {2, 2, 4, 37},
      {{"mode", std::string("linear")}, {"scales", FL{2, 2}}});
  const std::string nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  for (const std::string& nm : nearest) {
    add("nearest x2 asymmetric " + nm + " [1,3,5,6]", {1, 3, 5, 6},
        {{"scales", FL{2, 2}},
         {"coordinate_transformation_mode", std::string("asymmetric")},
         {"nearest_mode", nm}});
    add("nearest sizes 3x7 half_pixel " + nm + " [1,2,7,5]", {1, 2, 7, 5},
        {{"sizes", IL{3, 7}}, {"nearest_mode", nm}});
  }
  // Nearest doubling (half_pixel, round_prefer_floor: input o / 2) takes the
  // widening kernels: vectors and a tail; the second with an output of 8 MiB
  // in f32 (streamed stores).
  add("nearest x2 [2,3,5,37]", {2, 3, 5, 37}, {{"scales", FL{2, 2}}});
  add("nearest x2 [1,32,64,256]", {1, 32, 64, 256}, {{"scales", FL{2, 2}}});
  add("nearest x3 x2 [1,2,3,37]", {1, 2, 3, 37}, {{"scales", FL{3, 2}}});
  add("nearest x2 NHWC [2,5,5,19]", {2, 5, 5, 19},
      {{"scales", FL{2, 2}},
       {"layout", std::string("NHWC")},
       {"coordinate_transformation_mode", std::string("asymmetric")},
       {"nearest_mode", std::string("floor")}});
  add("linear x0.5 NHWC [1,8,9,33]", {1, 8, 9, 33},
      {{"mode", std::string("linear")}, {"scales", FL{0.5, 0.5}}, {"layout", std::string("NHWC")}});
  add("cubic x2 [1,2,5,6]", {1, 2, 5, 6}, {{"mode", std::string("cubic")}, {"scales", FL{2, 2}}});
  add("cubic A -0.5 exclude_outside sizes 7x3 [1,2,5,6]", {1, 2, 5, 6},
      {{"mode", std::string("cubic")},
       {"sizes", IL{7, 3}},
       {"cubic_coeff_a", -0.5},
       {"exclude_outside", int64_t{1}}});
  add("tf_crop_and_resize linear [1,2,8,8]", {1, 2, 8, 8},
      {{"mode", std::string("linear")},
       {"sizes", IL{5, 6}},
       {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
       {"roi", FL{-0.2, 0.1, 0.9, 1.3}},
       {"extrapolation_value", 0.5}});
  add("linear 1-D [2,3,33] -> 16", {2, 3, 33},
      {{"mode", std::string("linear")}, {"sizes", IL{16}}});
  add("linear 3-D [1,2,3,4,5] x2", {1, 2, 3, 4, 5},
      {{"mode", std::string("linear")}, {"scales", FL{2, 2, 2}}});
  add("spatial 1 -> 3x3 align_corners [1,2,1,1]", {1, 2, 1, 1},
      {{"mode", std::string("linear")},
       {"sizes", IL{3, 3}},
       {"coordinate_transformation_mode", std::string("align_corners")}});
  add("empty batch [0,2,3,3]", {0, 2, 3, 3}, {{"scales", FL{2, 2}}});
  return cs;
}

}  // namespace

void register_resize(Registry& reg) {
  OpSchema s;
  s.name = "resize";
  s.family = "resize";
  s.doc =
      "ONNX Resize over the spatial dims (nearest, linear, cubic); scales or sizes as attributes";
  s.inputs = {{"x", "[N, C, spatial...] (NCHW) or [N, spatial..., C] (NHWC), 1 to 3 spatial dims"}};
  s.outputs = {{"y", "resized, dtype of x"}};
  s.attrs = {
      {"mode", AttrType::str, std::string("nearest"), "nearest|linear|cubic"},
      {"scales", AttrType::f64s, std::vector<double>{},
       "per spatial dim (out = floor(in * scale))"},
      {"sizes", AttrType::i64s, std::vector<int64_t>{}, "per spatial dim (instead of scales)"},
      {"coordinate_transformation_mode", AttrType::str, std::string("half_pixel"),
       "half_pixel|align_corners|asymmetric|pytorch_half_pixel|tf_crop_and_resize"},
      {"nearest_mode", AttrType::str, std::string("round_prefer_floor"),
       "round_prefer_floor|round_prefer_ceil|floor|ceil"},
      {"cubic_coeff_a", AttrType::f64, -0.75, "cubic kernel parameter"},
      {"exclude_outside", AttrType::i64, int64_t{0},
       "1: cubic taps outside the input get weight 0"},
      {"extrapolation_value", AttrType::f64, 0.0, "tf_crop_and_resize: value outside the input"},
      {"roi", AttrType::f64s, std::vector<double>{},
       "tf_crop_and_resize: starts then ends (normalised)"},
      layout_attr()};
  s.dtypes = ops::kFloatDTypes;
  s.infer = infer;
  s.reference = reference;
  s.cases = cases;
  s.tolerance = default_tolerance;
  reg.add_op(std::move(s));
  ops::add_isa_kernels(
      reg, "resize",
      ops::PerIsa<ResizeFn>{resize_fn_avx512(), resize_fn_avx2(), resize_fn_scalar()},
      [](ResizeFn fn, Isa) -> KernelFactory {
        return [fn](const OpCall& call, std::string*) {
          struct Inst : KernelInstance {
            ResizePlan plan;
            ResizeFn fn = nullptr;
            void run(const Tensor* in, Tensor* out, void*) override {
              if (out[0].numel() == 0) return;
              fn(plan, in[0].data(), out[0].data());
            }
          };
          auto inst = std::make_unique<Inst>();
          inst->plan = plan_of(call);
          inst->fn = fn;
          return std::unique_ptr<KernelInstance>(std::move(inst));
        };
      });
}

}  // namespace opsnn::conv

// ONNX convolution, pooling and resizing -> conv1d/2d/3d, conv_transpose2d,
// max_pool2d(_with_indices), avg_pool2d, global_avg_pool, global_max_pool,
// resize. The library's pooling and transposed convolution are 2-D: the 1-D
// forms run as 2-D ones over an inserted unit dim (unsqueeze, op, squeeze).
#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/onnx/onnx_map.h"

namespace opsnn::onnx {
namespace {

using graph::AttrInput;
using graph::kNoValue;
using IL = std::vector<int64_t>;

// Spatial rank from kernel_shape, a constant weight, or X's declared rank.
int spatial_rank(MapContext& c, size_t weight_input) {
  const IL k = c.ints("kernel_shape");
  if (!k.empty()) return static_cast<int>(k.size());
  if (weight_input != SIZE_MAX) {
    if (const Tensor* w = c.constant_in(weight_input)) return static_cast<int>(w->rank()) - 2;
    const graph::Value& wv = c.graph().value(c.required(weight_input));
    if (wv.has_shape) return static_cast<int>(wv.shape.size()) - 2;
  }
  const graph::Value& x = c.graph().value(c.required(0));
  if (!x.has_shape) c.fail("input 'X'", "a declared rank", "none");
  return static_cast<int>(x.shape.size()) - 2;
}

// The window attributes ONNX and the library share; absent ones keep the
// library's defaults. `dilations` only where the op takes it.
Attrs window(MapContext& c, bool dilations) {
  Attrs a{{"auto_pad", c.s("auto_pad", "NOTSET")}};
  if (c.has("strides")) a.set("strides", c.ints("strides"));
  if (c.has("pads")) a.set("pads", c.ints("pads"));
  if (dilations && c.has("dilations")) a.set("dilations", c.ints("dilations"));
  return a;
}

// 1-D window attributes as 2-D ones over a leading unit dim.
void lift_1d(Attrs& a) {
  for (const char* name : {"strides", "dilations", "kernel_shape", "output_padding"})
    if (a.has(name)) {
      const IL v = a.ints(name);
      if (v.size() == 1) a.set(name, IL{name == std::string("output_padding") ? 0 : 1, v[0]});
    }
  if (a.has("output_shape") && a.ints("output_shape").size() == 1)
    a.set("output_shape", IL{1, a.ints("output_shape")[0]});
  if (a.has("pads") && a.ints("pads").size() == 2) {
    const IL p = a.ints("pads");
    a.set("pads", IL{0, p[0], 0, p[1]});
  }
}

// Emits `op` over inputs whose spatial rank is 2, or lifts a 1-D node to it.
void emit_2d(MapContext& c, int r, const std::string& op, std::vector<ValueId> ins, Attrs a,
             int n_out = -1) {
  if (r == 2) {
    c.emit(op, std::move(ins), a, {}, n_out);
    return;
  }
  if (r != 1) c.fail("spatial rank", "1 or 2 (the library's " + op + " is 2-D)", std::to_string(r));
  lift_1d(a);
  const Attrs at2{{"axes", IL{2}}};
  for (size_t i = 0; i < ins.size() && i < 2; ++i)
    if (ins[i] != kNoValue) ins[i] = c.add("unsqueeze", {ins[i]}, at2)[0];
  const ValueId y = c.add(op, std::move(ins), a)[0];
  c.emit("squeeze", {y}, at2);
}

void conv(MapContext& c) {
  const int r = spatial_rank(c, 1);
  if (r < 1 || r > 3) c.fail("spatial rank", "1, 2 or 3", std::to_string(r));
  Attrs a = window(c, true);
  a.set("group", c.i("group", 1));
  c.ints("kernel_shape");  // implied by the weight, which the op checks
  c.emit("conv" + std::to_string(r) + "d", {c.required(0), c.required(1), c.in(2)}, a);
}

// ConvTranspose's output_shape may exceed the full output (total padding
// below 0): ONNX then pads the end with rows no tap reaches. With X and W
// declared, the shape becomes pads and output_padding (which the library's
// op takes); otherwise it is passed on as output_shape.
void output_shape_as_pads(MapContext& c, int r, Attrs& a) {
  const IL target = c.ints("output_shape");
  const graph::Value& x = c.graph().value(c.required(0));
  const graph::Value& w = c.graph().value(c.required(1));
  const auto known = [](const graph::Value& v, size_t rank) {
    if (!v.has_shape || v.shape.size() != rank) return false;
    for (const graph::Dim& d : v.shape)
      if (d.is_symbolic()) return false;
    return true;
  };
  const auto n = static_cast<size_t>(r);
  if (target.size() != n || !known(x, n + 2) || !known(w, n + 2)) {
    a.set("output_shape", target);
    return;
  }
  const auto get = [&](const char* name, int64_t def) {
    IL v = a.has(name) ? a.ints(name) : IL{};
    if (v.empty()) v.assign(n, def);
    return v;
  };
  const IL st = get("strides", 1), dil = get("dilations", 1);
  IL op = get("output_padding", 0), pads(2 * n, 0);
  const bool upper = a.s("auto_pad") == "SAME_UPPER";
  constexpr int64_t kSane = int64_t{1} << 30;  // larger values: the op's own checks decide
  const auto sane = [&](const IL& v) {
    return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e >= 0 && e < kSane; });
  };
  IL dims;
  for (size_t j = 0; j < n; ++j) {
    dims.push_back(w.shape[j + 2].size);
    dims.push_back(x.shape[j + 2].size);
  }
  if (!sane(st) || !sane(dil) || !sane(op) || !sane(target) || !sane(dims) || st.size() != n ||
      dil.size() != n || op.size() != n) {
    a.set("output_shape", target);
    return;
  }
  for (size_t j = 0; j < n; ++j) {
    const int64_t k = w.shape[j + 2].size, in = x.shape[j + 2].size;
    const int64_t total = st[j] * (in - 1) + op[j] + (k - 1) * dil[j] + 1 - target[j];
    if (total < 0) {
      op[j] -= total;
      continue;
    }
    pads[j] = upper ? total / 2 : total - total / 2;
    pads[j + n] = total - pads[j];
  }
  a.set("pads", pads);
  a.set("output_padding", op);
  a.set("auto_pad", std::string("NOTSET"));
}

void conv_transpose(MapContext& c) {
  const int r = spatial_rank(c, 1);
  Attrs a = window(c, true);
  a.set("group", c.i("group", 1));
  if (c.has("output_padding")) a.set("output_padding", c.ints("output_padding"));
  if (c.has("output_shape")) output_shape_as_pads(c, r, a);
  c.ints("kernel_shape");
  emit_2d(c, r, "conv_transpose2d", {c.required(0), c.required(1), c.in(2)}, a);
}

void max_pool(MapContext& c) {
  const int r = spatial_rank(c, SIZE_MAX);
  Attrs a = window(c, true);
  a.set("kernel_shape", c.ints("kernel_shape"));
  a.set("ceil_mode", c.i("ceil_mode", 0));
  if (!c.has_output(1)) {
    c.i("storage_order", 0);  // only affects the indices
    emit_2d(c, r, "max_pool2d", {c.required(0)}, a, 1);
    return;
  }
  // ONNX's indices count over the whole tensor; the library's within each
  // (n, c) plane: add n*C*H*W + c*H*W, which needs N, C, H, W declared.
  if (c.i("storage_order", 0) != 0)
    c.fail("attribute 'storage_order'", "0 (row-major indices)", "1");
  if (r != 2) c.fail("output 'Indices'", "2-D pooling", std::to_string(r) + "-D");
  const graph::Value& x = c.graph().value(c.required(0));
  IL d;
  for (const graph::Dim& dim : x.shape)
    if (!dim.is_symbolic()) d.push_back(dim.size);
  if (!x.has_shape || d.size() != 4)
    c.fail("input 'X'", "declared numeric dims (for the indices)", "symbols or none");
  for (int64_t v : d)
    if (v > (int64_t{1} << 15))
      c.fail("input 'X'", "dims up to 2^15 (the indices' offsets)", std::to_string(v));
  Tensor off = Tensor::empty({d[0], d[1], 1, 1}, DType::i64);
  for (int64_t i = 0; i < d[0] * d[1]; ++i) off.data_as<int64_t>()[i] = i * d[2] * d[3];
  const auto yi = c.add("max_pool2d_with_indices", {c.required(0)}, a);
  c.alias(0, yi[0]);
  c.alias(1, c.add("add", {yi[1], c.constant(off)})[0]);
}

void avg_pool(MapContext& c) {
  const int r = spatial_rank(c, SIZE_MAX);
  Attrs a = window(c, false);
  if (c.opset() >= 19 && c.has("dilations")) {
    for (int64_t v : c.ints("dilations"))
      if (v != 1) c.fail("attribute 'dilations'", "all 1", "a dilation > 1");
  }
  a.set("kernel_shape", c.ints("kernel_shape"));
  a.set("ceil_mode", c.i("ceil_mode", 0));
  a.set("count_include_pad", c.i("count_include_pad", 0));
  emit_2d(c, r, "avg_pool2d", {c.required(0)}, a);
}

template <const char* Op>
void global_pool(MapContext& c) {
  c.emit(Op, {c.required(0)});
}
constexpr char kGlobalAvg[] = "global_avg_pool", kGlobalMax[] = "global_max_pool";

// Resize's scales / sizes / roi cover every dim; the library's take the
// spatial ones. Known at import: checked (N and C untouched) and cut here;
// known only when the plan is made (a pinned graph input): cut by a slice
// that folds then (the library's resize then checks the count).
ValueId slice_of(MapContext& c, ValueId v, int64_t begin, int64_t end) {
  const ValueId s = c.constant(Tensor::from<int64_t>({begin}, {1}));
  const ValueId e = c.constant(Tensor::from<int64_t>({end}, {1}));
  return c.add("slice", {v}, {},
               {{"starts", s, AttrInput::Kind::ints}, {"ends", e, AttrInput::Kind::ints}})[0];
}

// Input i's element count: its data's at import, else its declared 1-D shape's.
int64_t length_of(MapContext& c, size_t i) {
  if (const Tensor* t = c.constant_in(i)) return t->numel();
  const graph::Value& v = c.graph().value(c.required(i));
  if (v.has_shape && v.shape.size() == 1 && !v.shape[0].is_symbolic()) return v.shape[0].size;
  return -1;
}

// Scales (f64s) or sizes (ints) from input i: the spatial part as an
// attribute or a plan-time attribute input.
void spatial_attr(MapContext& c, size_t i, const char* name, Attrs& a, std::vector<AttrInput>& ai) {
  const bool is_scales = std::string(name) == "scales";
  const Tensor* t = c.constant_in(i);
  if (!t) {
    ai.push_back({name, slice_of(c, c.required(i), 2, std::numeric_limits<int64_t>::max()),
                  is_scales ? AttrInput::Kind::f64s : AttrInput::Kind::ints});
    return;
  }
  const int64_t n = t->numel();
  if (n < 3)
    c.fail(std::string("input '") + name + "'", "N, C and spatial values",
           std::to_string(n) + " values");
  const graph::Value& x = c.graph().value(c.required(0));
  for (int64_t k = 0; k < 2; ++k) {
    const auto ku = static_cast<size_t>(k);
    if (is_scales && t->flat_get(k) != 1)
      c.fail("input 'scales'", "1 for the N and C dims", "another value");
    if (!is_scales && x.has_shape && x.shape.size() > ku && !x.shape[ku].is_symbolic() &&
        t->flat_get(k) != static_cast<double>(x.shape[ku].size))
      c.fail("input 'sizes'", "X's N and C", "other values");
  }
  IL iv;
  std::vector<double> fv;
  for (int64_t k = 2; k < n; ++k) {
    const double v = t->flat_get(k);
    if (!(std::fabs(v) < 9.2e18))
      c.fail(std::string("input '") + name + "'", "finite values", std::to_string(v));
    iv.push_back(static_cast<int64_t>(v));
    fv.push_back(t->flat_get(k));
  }
  if (is_scales)
    a.set(name, fv);
  else
    a.set(name, iv);
}

// A present input with no elements counts as absent (Resize-13 passes ""
// or an empty tensor for the one not used).
ValueId present(MapContext& c, size_t i) {
  const ValueId v = c.in(i);
  if (v == kNoValue) return v;
  const Tensor* t = c.constant_in(i);
  if (t && t->numel() == 0) return kNoValue;
  const graph::Value& val = c.graph().value(v);
  if (val.has_shape && val.shape.size() == 1 && !val.shape[0].is_symbolic() &&
      val.shape[0].size == 0)
    return kNoValue;
  return v;
}

void resize(MapContext& c) {
  Attrs a{{"mode", c.s("mode", "nearest")}};
  std::vector<AttrInput> ai;
  if (c.opset() < 11) {  // Resize-10: X, scales; Upsample's coordinates
    a.set("coordinate_transformation_mode", std::string("asymmetric"));
    a.set("nearest_mode", std::string("floor"));
    spatial_attr(c, 1, "scales", a, ai);
    c.emit("resize", {c.required(0)}, a, ai);
    return;
  }
  const std::string coord = c.s("coordinate_transformation_mode", "half_pixel");
  a.set("coordinate_transformation_mode", coord);
  a.set("nearest_mode", c.s("nearest_mode", "round_prefer_floor"));
  a.set("cubic_coeff_a", c.f("cubic_coeff_a", -0.75));
  a.set("exclude_outside", c.i("exclude_outside", 0));
  a.set("extrapolation_value", c.f("extrapolation_value", 0.0));
  if (c.opset() >= 18) {
    if (c.i("antialias", 0) != 0) c.fail("attribute 'antialias'", "0", "1");
    if (c.has("axes")) c.fail("attribute 'axes'", "absent (every dim)", "present");
    if (c.s("keep_aspect_ratio_policy", "stretch") != "stretch")
      c.fail("attribute 'keep_aspect_ratio_policy'", "stretch", "another");
  }
  if (coord == "tf_crop_and_resize") {
    // roi = [starts of every dim, ends of every dim]: keep the spatial ones.
    const int64_t n = length_of(c, 1);
    if (n < 6 || n % 2) c.fail("input 'roi'", "a declared length 2 * rank", std::to_string(n));
    const int64_t rank = n / 2;
    const ValueId roi = c.required(1);
    const ValueId both =
        c.add("concat", {slice_of(c, roi, 2, rank), slice_of(c, roi, rank + 2, 2 * rank)},
              {{"axis", int64_t{0}}})[0];
    ai.push_back({"roi", both, AttrInput::Kind::f64s});
  }
  if (present(c, 3) != kNoValue)
    spatial_attr(c, 3, "sizes", a, ai);
  else if (present(c, 2) != kNoValue)
    spatial_attr(c, 2, "scales", a, ai);
  else
    c.fail("inputs 'scales' / 'sizes'", "one of them", "neither");
  c.emit("resize", {c.required(0)}, a, ai);
}

// Upsample (7-9): nearest or linear with the asymmetric mapping.
void upsample(MapContext& c) {
  std::string mode = c.s("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  Attrs a{{"mode", mode},
          {"coordinate_transformation_mode", std::string("asymmetric")},
          {"nearest_mode", std::string("floor")}};
  std::vector<AttrInput> ai;
  if (c.opset() < 9) {
    const std::vector<double> s = c.floats("scales");
    if (s.size() < 3 || s[0] != 1 || s[1] != 1)
      c.fail("attribute 'scales'", "1 for N and C, then the spatial scales", "another list");
    a.set("scales", std::vector<double>(s.begin() + 2, s.end()));
  } else {
    spatial_attr(c, 1, "scales", a, ai);
  }
  c.emit("resize", {c.required(0)}, a, ai);
}

}  // namespace

void add_conv_mappings(MappingTable& t) {
  const Mapping m[] = {
      {"Conv", 7, conv},
      {"ConvTranspose", 7, conv_transpose},
      {"MaxPool", 7, max_pool},
      {"AveragePool", 7, avg_pool},
      {"GlobalAveragePool", 7, global_pool<kGlobalAvg>},
      {"GlobalMaxPool", 7, global_pool<kGlobalMax>},
      {"Resize", 10, resize},
      {"Upsample", 7, upsample},
  };
  t.insert(t.end(), std::begin(m), std::end(m));
}

}  // namespace opsnn::onnx

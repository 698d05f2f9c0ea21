// quantize / dequantize / quantize_dynamic: schemas, references that emulate
// the kernels' f32 arithmetic (so integer outputs compare exactly), case tables
// and kernel registration. Semantics follow ONNX QuantizeLinear /
// DequantizeLinear (round half to even, saturate) and DynamicQuantizeLinear
// (asymmetric per row here, plus a symmetric form); see docs/quantization.md.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/builtin_ops.h"
#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "ops/quant/quant.h"
#include "opsnn/op.h"

namespace opsnn {

void quant::dynamic_levels(bool u8, bool symmetric, bool reduce_range, DynamicArgs* a) {
  // ONNX Runtime's levels (quantization's get_qmin_qmax_for_qType): 7-bit
  // symmetric i8 keeps -64..64, its u8 form the same around 128.
  a->sym_levels = reduce_range ? 64.0f : 127.0f;
  a->asym_levels = reduce_range ? 127.0f : 255.0f;
  if (!reduce_range) {
    a->qmin = u8 ? 0.0f : -128.0f;
    a->qmax = u8 ? 255.0f : 127.0f;
  } else if (symmetric) {
    a->qmin = u8 ? 64.0f : -64.0f;
    a->qmax = u8 ? 192.0f : 64.0f;
  } else {
    a->qmin = u8 ? 0.0f : -64.0f;
    a->qmax = u8 ? 127.0f : 63.0f;
  }
}

namespace {

const quant::Fns& fns_for(Isa isa) {
  return isa == Isa::avx512 ? quant::fns_avx512()
         : isa == Isa::avx2 ? quant::fns_avx2()
                            : quant::fns_scalar();
}

DType int_dtype_attr(const OpCall& call, const char* name) {
  const std::string& s = call.attrs.s(name);
  if (s == "i8" || s == "int8") return DType::i8;
  if (s == "u8" || s == "uint8") return DType::u8;
  call.fail(std::string("attribute '") + name + "'", "i8|u8", "'" + s + "'");
}

// Channel split of x for per-tensor (channels 1) or per-channel scales.
struct Split {
  int64_t outer = 1, channels = 1, inner = 1;
  int64_t axis = -1;  // -1: per tensor
};

Split split_of(const OpCall& call) {
  const TensorDesc &x = call.in(0), &s = call.in(1);
  Split sp;
  sp.inner = x.numel();
  if (s.numel() == 1 && s.rank() <= 1) return sp;  // per tensor
  if (s.rank() != 1 || x.rank() == 0)
    call.fail(ops::input_name(call, 1), "a scalar, [1], or [x.shape[axis]] (per channel)",
              shape_str(s.shape));
  sp.axis = call.axis("attribute 'axis'", call.attrs.i("axis"), x.rank());
  if (s.shape[0] != x.shape[static_cast<size_t>(sp.axis)])
    call.fail(ops::input_name(call, 1),
              "[" + std::to_string(x.shape[static_cast<size_t>(sp.axis)]) + "] (x.shape[" +
                  std::to_string(sp.axis) + "])",
              shape_str(s.shape));
  sp.outer = 1;
  sp.inner = 1;
  for (int64_t d = 0; d < sp.axis; ++d) sp.outer *= x.shape[static_cast<size_t>(d)];
  sp.channels = x.shape[static_cast<size_t>(sp.axis)];
  for (int64_t d = sp.axis + 1; d < x.rank(); ++d) sp.inner *= x.shape[static_cast<size_t>(d)];
  return sp;
}

// The argument block of quantize and dequantize (the same fields, per channel).
template <class Args>
Args channel_args(const OpCall& call, const Tensor* in, Tensor* out) {
  const Split sp = split_of(call);
  Args a;
  a.xt = in[0].dtype();
  a.x = in[0].data();
  a.yt = out[0].dtype();
  a.y = out[0].data();
  a.outer = sp.outer;
  a.channels = sp.channels;
  a.inner = sp.inner;
  a.scale = in[1].data_as<float>();
  a.zp = call.has_input(2) ? in[2].data() : nullptr;
  return a;
}

// `<op>_{avx512,avx2,scalar}` for f32/bf16/f16 inputs; run(call, in, out, isa).
template <class Run>
void add_quant_kernels(Registry& r, const std::string& op, Run run) {
  ops::add_isa_kernels(r, op, ops::PerIsa<Isa>{Isa::avx512, Isa::avx2, Isa::scalar},
                       [run](Isa isa, Isa) {
                         return simple_kernel(
                             [run, isa](const OpCall& call, const Tensor* in, Tensor* out, void*) {
                               run(call, in, out, isa);
                             },
                             nullptr);
                       },
                       "", {DType::f32, DType::bf16, DType::f16});
}

void check_scale_zp(const OpCall& call, std::initializer_list<DType> zp_types) {
  ops::require_dtype(call, 1, {DType::f32});
  if (call.has_input(2)) {
    ops::require_dtype(call, 2, zp_types);
    if (call.in(2).shape != call.in(1).shape)
      call.fail(ops::input_name(call, 2), "the shape of 'scale' " + shape_str(call.in(1).shape),
                shape_str(call.in(2).shape));
  }
  (void)split_of(call);
}

// f32 quantization step, as the kernels do it: true division, round half to
// even, add the zero point, saturate (NaN -> the lowest value).
double quantize_f32(double x, double s, double zp, double lo, double hi) {
  const float r = static_cast<float>(x / s);  // == the f32 division (double rounding is exact)
  const double q = std::nearbyint(static_cast<double>(r)) + zp;
  if (std::isnan(q)) return lo;
  return std::min(std::max(q, lo), hi);
}

template <class F>
void for_each_channel(const Split& sp, F f) {  // f(flat index, channel)
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t c = 0; c < sp.channels; ++c)
      for (int64_t i = 0; i < sp.inner; ++i) f((o * sp.channels + c) * sp.inner + i, c);
}

ValueRange real(double lo, double hi) { return {lo, hi, false}; }
ValueRange ints(double lo, double hi) { return {lo, hi, true}; }

// ---- quantize ---------------------------------------------------------------------
void add_quantize(Registry& r) {
  OpSchema s;
  s.name = "quantize";
  s.family = "quant";
  s.doc =
      "ONNX QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point); per tensor "
      "(scale [] or [1]) or per channel (scale [x.shape[axis]]); y is i8 or u8 (the zero "
      "point's dtype, else attribute dtype)";
  s.inputs = {{"x", "f32, bf16 or f16"},
              {"scale", "f32 [], [1] or [C]"},
              {"zero_point", "i8/u8, shape of scale (default 0)", true}};
  s.outputs = {{"y", "i8/u8, shape of x"}};
  s.attrs = {{"axis", AttrType::i64, int64_t{1}, "channel axis for a per-channel scale"},
             {"dtype", AttrType::str, std::string("i8"), "i8|u8 when zero_point is absent"}};
  s.dtypes = {DType::f32, DType::bf16, DType::f16};
  s.infer = [](const OpCall& call) {
    ops::require_dtype(call, 0, {DType::f32, DType::bf16, DType::f16});
    check_scale_zp(call, {DType::i8, DType::u8});
    const DType yt = call.has_input(2) ? call.in(2).dtype : int_dtype_attr(call, "dtype");
    return std::vector<TensorDesc>{TensorDesc(yt, call.in(0).shape)};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in,
                   std::vector<RefTensor>& out) {
    const Split sp = split_of(call);
    const bool u8 = call.out(0).dtype == DType::u8;
    const double lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    for_each_channel(sp, [&](int64_t i, int64_t c) {
      const size_t ci = static_cast<size_t>(c);
      const double zp = call.has_input(2) ? in[2].data[ci] : 0.0;
      out[0].data[static_cast<size_t>(i)] =
          quantize_f32(in[0].data[static_cast<size_t>(i)], in[1].data[ci], zp, lo, hi);
    });
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, std::vector<TensorDesc> in, Attrs at,
                   std::vector<ValueRange> rg) {
      CheckCase c{std::move(name), std::move(in), std::move(at), std::move(rg)};
      c.keep_dtypes = true;
      cs.push_back(std::move(c));
    };
    const TensorDesc none = TensorDesc::none();
    for (Shape sh : {Shape{0}, Shape{1}, Shape{15}, Shape{17}, Shape{1000}, Shape{3, 65}})
      add("tensor" + shape_str(sh), {TensorDesc(t, sh), TensorDesc(DType::f32, {})}, {},
          {real(-4, 4), real(0.01, 0.05)});
    add("tensor_u8_zp[257]",
        {TensorDesc(t, {257}), TensorDesc(DType::f32, {1}), TensorDesc(DType::u8, {1})}, {},
        {real(-4, 4), real(0.01, 0.05), ints(0, 255)});
    add("tensor_i8_zp[100]",
        {TensorDesc(t, {100}), TensorDesc(DType::f32, {}), TensorDesc(DType::i8, {})}, {},
        {real(-4, 4), real(0.01, 0.05), ints(-20, 20)});
    add("tensor_u8_attr[70]", {TensorDesc(t, {70}), TensorDesc(DType::f32, {}), none},
        {{"dtype", std::string("u8")}}, {real(-1, 4), real(0.01, 0.05)});
    // Integer x / 2: exact halves, round half to even.
    add("ties[600]", {TensorDesc(t, {600}), TensorDesc(DType::f32, {1})}, {},
        {ints(-300, 300), ints(2, 2)});
    add("channel_axis0[33,70]", {TensorDesc(t, {33, 70}), TensorDesc(DType::f32, {33})},
        {{"axis", int64_t{0}}}, {real(-4, 4), real(0.01, 0.05)});
    add("channel_last[5,33]",
        {TensorDesc(t, {5, 33}), TensorDesc(DType::f32, {33}), TensorDesc(DType::i8, {33})},
        {{"axis", int64_t{-1}}}, {real(-4, 4), real(0.01, 0.05), ints(-10, 10)});
    add("channel_mid_u8[2,3,40]",
        {TensorDesc(t, {2, 3, 40}), TensorDesc(DType::f32, {3}), TensorDesc(DType::u8, {3})}, {},
        {real(-4, 4), real(0.01, 0.05), ints(100, 150)});
    add("strided[33,17]^T", {TensorDesc(t, {17, 33}, {1, 17}), TensorDesc(DType::f32, {})}, {},
        {real(-4, 4), real(0.01, 0.05)});
    return cs;
  };
  r.add_op(std::move(s));

  add_quant_kernels(r, "quantize", [](const OpCall& call, const Tensor* in, Tensor* out, Isa isa) {
    fns_for(isa).quantize(channel_args<quant::QuantizeArgs>(call, in, out));
  });
}

// ---- dequantize -------------------------------------------------------------------
void add_dequantize(Registry& r) {
  OpSchema s;
  s.name = "dequantize";
  s.family = "quant";
  s.doc =
      "ONNX DequantizeLinear: y = (x - zero_point) * scale in f32 (then rounded to bf16 or f16 "
      "for dtype bf16/f16); per tensor or per channel (axis)";
  s.inputs = {{"x", "i8, u8 or i32"},
              {"scale", "f32 [], [1] or [C]"},
              {"zero_point", "dtype of x, shape of scale (default 0)", true}};
  s.outputs = {{"y", "f32, bf16 or f16 (attribute dtype), shape of x"}};
  s.attrs = {{"axis", AttrType::i64, int64_t{1}, "channel axis for a per-channel scale"},
             {"dtype", AttrType::str, std::string("f32"), "output dtype: f32|bf16|f16"}};
  s.dtypes = {DType::f32, DType::bf16, DType::f16};
  s.infer = [](const OpCall& call) {
    ops::require_dtype(call, 0, {DType::i8, DType::u8, DType::i32});
    check_scale_zp(call, {call.in(0).dtype});
    const std::string& d = call.attrs.s("dtype");
    if (d != "f32" && d != "bf16" && d != "f16")
      call.fail("attribute 'dtype'", "f32|bf16|f16", "'" + d + "'");
    return std::vector<TensorDesc>{TensorDesc(dtype_from_name(d), call.in(0).shape)};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in,
                   std::vector<RefTensor>& out) {
    const Split sp = split_of(call);
    for_each_channel(sp, [&](int64_t i, int64_t c) {
      const size_t ci = static_cast<size_t>(c);
      const double zp = call.has_input(2) ? in[2].data[ci] : 0.0;
      const float q = static_cast<float>(in[0].data[static_cast<size_t>(i)] - zp);
      out[0].data[static_cast<size_t>(i)] =
          static_cast<float>(static_cast<double>(q) * in[1].data[ci]);
    });
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    const Attrs dt = {{"dtype", std::string(dtype_name(t))}};
    auto add = [&](std::string name, std::vector<TensorDesc> in, Attrs at,
                   std::vector<ValueRange> rg) {
      at.set("dtype", std::string(dtype_name(t)));
      CheckCase c{std::move(name), std::move(in), std::move(at), std::move(rg)};
      c.keep_dtypes = true;
      cs.push_back(std::move(c));
    };
    for (Shape sh : {Shape{0}, Shape{1}, Shape{17}, Shape{1000}, Shape{3, 65}})
      add("i8_tensor" + shape_str(sh), {TensorDesc(DType::i8, sh), TensorDesc(DType::f32, {})}, {},
          {ints(-128, 127), real(0.01, 0.05)});
    add("u8_zp[257]",
        {TensorDesc(DType::u8, {257}), TensorDesc(DType::f32, {1}), TensorDesc(DType::u8, {1})}, {},
        {ints(0, 255), real(0.01, 0.05), ints(0, 255)});
    add("i32_zp[99]",
        {TensorDesc(DType::i32, {99}), TensorDesc(DType::f32, {}), TensorDesc(DType::i32, {})}, {},
        {ints(-100000, 100000), real(0.001, 0.002), ints(-50, 50)});
    add("channel_axis0[33,70]", {TensorDesc(DType::i8, {33, 70}), TensorDesc(DType::f32, {33})},
        {{"axis", int64_t{0}}}, {ints(-128, 127), real(0.01, 0.05)});
    add("channel_last[5,33]",
        {TensorDesc(DType::i8, {5, 33}), TensorDesc(DType::f32, {33}), TensorDesc(DType::i8, {33})},
        {{"axis", int64_t{-1}}}, {ints(-128, 127), real(0.01, 0.05), ints(-10, 10)});
    add("channel_mid_u8[2,3,40]",
        {TensorDesc(DType::u8, {2, 3, 40}), TensorDesc(DType::f32, {3}),
         TensorDesc(DType::u8, {3})},
        {}, {ints(0, 255), real(0.01, 0.05), ints(100, 150)});
    return cs;
  };
  r.add_op(std::move(s));

  add_quant_kernels(r, "dequantize",
                    [](const OpCall& call, const Tensor* in, Tensor* out, Isa isa) {
                      fns_for(isa).dequantize(channel_args<quant::DequantizeArgs>(call, in, out));
                    });
}

// ---- quantize_dynamic -------------------------------------------------------------
void add_quantize_dynamic(Registry& r) {
  OpSchema s;
  s.name = "quantize_dynamic";
  s.family = "quant";
  s.doc =
      "per-token dynamic quantization of each row (last axis): symmetric: scale = absmax / 127, "
      "zero point 0 (i8) or 128 (u8); asymmetric (ONNX DynamicQuantizeLinear per row): scale = "
      "(max(0, xmax) - min(0, xmin)) / 255, zero point = saturate(round(qmin - min(0, xmin) / "
      "scale)). A zero range gives scale 1. Then y = quantize(x, scale, zero point). reduce_range "
      "(ONNX Runtime's 7-bit levels): symmetric absmax / 64 into [-64, 64] (u8: [64, 192]), "
      "asymmetric (max - min) / 127 into [-64, 63] (u8: [0, 127])";
  s.inputs = {{"x", "f32, bf16 or f16 [..., K]"}};
  s.outputs = {
      {"y", "i8/u8 [..., K]"}, {"scale", "f32 [..., 1]"}, {"zero_point", "dtype of y, [..., 1]"}};
  s.attrs = {{"dtype", AttrType::str, std::string("i8"), "i8|u8"},
             {"symmetric", AttrType::i64, int64_t{1}, "1: absmax scale; 0: min/max + zero point"},
             {"reduce_range", AttrType::i64, int64_t{0},
              "1: 7-bit levels (weights for the AVX2 int8 GEMM without VNNI)"}};
  s.dtypes = {DType::f32, DType::bf16, DType::f16};
  s.infer = [](const OpCall& call) {
    ops::require_dtype(call, 0, {DType::f32, DType::bf16, DType::f16});
    ops::require_rank_at_least(call, 0, 1);
    const DType yt = int_dtype_attr(call, "dtype");
    const int64_t sym = call.attrs.i("symmetric");
    if (sym != 0 && sym != 1) call.fail("attribute 'symmetric'", "0 or 1", std::to_string(sym));
    const int64_t rr = call.attrs.i("reduce_range");
    if (rr != 0 && rr != 1) call.fail("attribute 'reduce_range'", "0 or 1", std::to_string(rr));
    Shape ss = call.in(0).shape;
    ss.back() = 1;
    return std::vector<TensorDesc>{TensorDesc(yt, call.in(0).shape), TensorDesc(DType::f32, ss),
                                   TensorDesc(yt, ss)};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in,
                   std::vector<RefTensor>& out) {
    const bool u8 = call.out(0).dtype == DType::u8;
    const bool sym = call.attrs.i("symmetric") == 1;
    quant::DynamicArgs lv;
    quant::dynamic_levels(u8, sym, call.attrs.i("reduce_range") == 1, &lv);
    const double qmin = lv.qmin, qmax = lv.qmax;
    const int64_t K = call.in(0).shape.back();
    const int64_t rows = call.out(1).numel();  // one scale per row, also when K == 0
    for (int64_t rr = 0; rr < rows; ++rr) {
      const double* x = in[0].data.data() + rr * K;
      double xmin = 0, xmax = 0;
      for (int64_t k = 0; k < K; ++k) {
        xmin = std::min(xmin, x[k]);
        xmax = std::max(xmax, x[k]);
      }
      float scale;
      double zp = 0;
      if (sym) {
        scale = static_cast<float>(std::max(-xmin, xmax) / lv.sym_levels);
        zp = u8 ? 128 : 0;
      } else {
        scale = static_cast<float>(static_cast<float>(xmax - xmin) / lv.asym_levels);
      }
      if (!(scale > 0.0f) || std::isinf(scale)) scale = 1.0f;
      if (!sym) {
        const float t = static_cast<float>(qmin - static_cast<float>(xmin / scale));
        zp = std::min(std::max(std::nearbyint(static_cast<double>(t)), qmin), qmax);
      }
      out[1].data[static_cast<size_t>(rr)] = scale;
      out[2].data[static_cast<size_t>(rr)] = zp;
      for (int64_t k = 0; k < K; ++k)
        out[0].data[static_cast<size_t>(rr * K + k)] = quantize_f32(x[k], scale, zp, qmin, qmax);
    }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    for (const char* dt : {"i8", "u8"})
      for (int64_t sym : {1, 0}) {
        const std::string tag = std::string(dt) + (sym ? "_sym" : "_asym");
        const Attrs at = {{"dtype", std::string(dt)}, {"symmetric", sym}};
        for (Shape sh : {Shape{1, 1}, Shape{3, 17}, Shape{7, 64}, Shape{2, 5, 100}, Shape{1, 1000}})
          cs.push_back({tag + shape_str(sh), {TensorDesc(t, sh)}, at, {real(-3, 5)}});
        cs.push_back({tag + "_positive[4,33]", {TensorDesc(t, {4, 33})}, at, {real(0.5, 2)}});
        cs.push_back({tag + "_zeros[2,16]", {TensorDesc(t, {2, 16})}, at, {ints(0, 0)}});
        Attrs rr = at;
        rr.set("reduce_range", int64_t{1});
        for (Shape sh : {Shape{3, 17}, Shape{5, 100}})
          cs.push_back(
              {tag + "_reduce_range" + shape_str(sh), {TensorDesc(t, sh)}, rr, {real(-3, 5)}});
      }
    cs.push_back({"empty[0,8]", {TensorDesc(t, {0, 8})}, {}, {real(-3, 3)}});
    cs.push_back({"k0[3,0]", {TensorDesc(t, {3, 0})}, {}, {real(-3, 3)}});
    cs.push_back({"strided[33,17]^T", {TensorDesc(t, {17, 33}, {1, 17})}, {}, {real(-3, 3)}});
    return cs;
  };
  r.add_op(std::move(s));

  add_quant_kernels(r, "quantize_dynamic",
                    [](const OpCall& call, const Tensor* in, Tensor* out, Isa isa) {
                      quant::DynamicArgs a;
                      a.xt = in[0].dtype();
                      a.x = in[0].data();
                      a.yt = out[0].dtype();
                      a.y = out[0].data();
                      a.scale = out[1].data_as<float>();
                      a.zp = out[2].data();
                      a.cols = call.in(0).shape.back();
                      a.rows = out[1].numel();  // one scale per row, also when K == 0
                      a.symmetric = call.attrs.i("symmetric") == 1;
                      quant::dynamic_levels(a.yt == DType::u8, a.symmetric,
                                            call.attrs.i("reduce_range") == 1, &a);
                      fns_for(isa).dynamic(a);
                    });
}

}  // namespace

void register_quant_ops(Registry& r) {
  add_quantize(r);
  add_dequantize(r);
  add_quantize_dynamic(r);
  register_matmul_wq_op(r);
  register_matmul_int8_op(r);
}

}  // namespace opsnn

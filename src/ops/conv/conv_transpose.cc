// conv_transpose2d: ONNX ConvTranspose (2-D): strides, pads, auto_pad,
// output_padding, output_shape, groups, dilations, bias, a fused activation,
// NCHW or NHWC. Engine: per image and group one GEMM
//   cols[pixels_in, taps * Cout_g] = x_g[pixels_in, Cin_g] · w_g[Cin_g, taps * Cout_g]
// (the ONNX weight [Cin, Cout/g, kh, kw] with its columns reordered to (tap,
// output channel) when packed), then each output pixel gathers the taps that
// land on it, in a fixed order (no scatter, so results do not depend on
// threads), each tap's output channels as one contiguous run.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "kernels/gemm/gemm.h"
#include "ops/common/bench_keys.h"
#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "ops/conv/conv_act.h"
#include "ops/conv/conv_family.h"
#include "ops/conv/conv_geom.h"
#include "opsnn/log.h"
#include "opsnn/thread_pool.h"

namespace opsnn::conv {
namespace {

struct Geo {
  bool cl = false;
  int64_t n = 0, cin = 0, cout = 0, groups = 1;
  int64_t in[2] = {1, 1}, out[2] = {1, 1}, k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1},
          pb[2] = {0, 0};
};

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::vector<int64_t> two(const OpCall& call, const char* name, int64_t def, int64_t min_v,
                         size_t count = 2) {
  std::vector<int64_t> v = call.attrs.ints(name);
  if (v.empty()) v.assign(count, def);
  if (v.size() != count)
    call.fail(std::string("attribute '") + name + "'", std::to_string(count) + " values",
              list_str(v));
  for (int64_t x : v)
    if (x < min_v)
      call.fail(std::string("attribute '") + name + "'", "values >= " + std::to_string(min_v),
                list_str(v));
  return v;
}

Geo geometry(const OpCall& call) {
  Geo g;
  const Shape& xs = call.in(0).shape;
  const Shape& ws = call.in(1).shape;
  g.cl = channels_last(call);
  g.n = xs[0];
  g.cin = g.cl ? xs[3] : xs[1];
  g.groups = call.attrs.i("group");
  if (g.groups < 1) call.fail("attribute 'group'", ">= 1", std::to_string(g.groups));
  if (g.cin < 1) call.fail("x", "at least one input channel", shape_str(xs));
  if (g.cin % g.groups != 0)
    call.fail("attribute 'group'", "a divisor of the input channels " + std::to_string(g.cin),
              std::to_string(g.groups));
  if (ws[0] != g.cin)
    call.fail("w", "dim 0 = input channels " + std::to_string(g.cin), shape_str(ws));
  if (ws[1] < 1) call.fail("w", "at least one output channel per group", shape_str(ws));
  g.cout = ws[1] * g.groups;
  const std::vector<int64_t> s = two(call, "strides", 1, 1), d = two(call, "dilations", 1, 1),
                             op = two(call, "output_padding", 0, 0),
                             pads = two(call, "pads", 0, 0, 4);
  const std::vector<int64_t>& oshape = call.attrs.ints("output_shape");
  const std::string& ap = call.attrs.s("auto_pad");
  if (ap != "NOTSET" && ap != "SAME_UPPER" && ap != "SAME_LOWER" && ap != "VALID")
    call.fail("attribute 'auto_pad'", "NOTSET|SAME_UPPER|SAME_LOWER|VALID", "'" + ap + "'");
  if (!oshape.empty() && oshape.size() != 2)
    call.fail("attribute 'output_shape'", "2 values", list_str(oshape));
  for (int j = 0; j < 2; ++j) {
    g.in[j] = g.cl ? xs[static_cast<size_t>(1 + j)] : xs[static_cast<size_t>(2 + j)];
    g.k[j] = ws[static_cast<size_t>(2 + j)];
    if (g.k[j] < 1) call.fail("w", "kernel sizes >= 1", shape_str(ws));
    g.s[j] = s[static_cast<size_t>(j)];
    g.d[j] = d[static_cast<size_t>(j)];
    const int64_t opad = op[static_cast<size_t>(j)];
    if (opad >= g.s[j] && opad >= g.d[j])
      call.fail("attribute 'output_padding'", "values < stride or < dilation", list_str(op));
    // s (in - 1) + opad + (k - 1) d + 1, attribute values checked for overflow.
    const int64_t full = call.checked_add(
        "attribute 'dilations'",
        call.checked_add("attribute 'strides'",
                         call.checked_mul("attribute 'strides'", g.s[j], g.in[j] - 1), opad),
        call.checked_add("attribute 'dilations'",
                         call.checked_mul("attribute 'dilations'", g.k[j] - 1, g.d[j]), 1));
    int64_t pb = pads[static_cast<size_t>(j)], pe = pads[static_cast<size_t>(j + 2)];
    int64_t target = -1;
    if (!oshape.empty())
      target = oshape[static_cast<size_t>(j)];
    else if (ap == "SAME_UPPER" || ap == "SAME_LOWER")
      target = call.checked_mul("attribute 'strides'", g.in[j], g.s[j]);
    if (ap == "VALID") pb = pe = 0;
    if (target >= 0) {
      const int64_t total = full - target;
      if (total < 0)
        call.fail("attribute 'output_shape'",
                  "at most " + std::to_string(full) + " in spatial dim " + std::to_string(j),
                  std::to_string(target));
      if (ap == "SAME_UPPER") {
        pb = total / 2;
        pe = total - pb;
      } else {
        pe = total / 2;
        pb = total - pe;
      }
    }
    g.pb[j] = pb;
    g.out[j] = full - call.checked_add("attribute 'pads'", pb, pe);
    if (g.out[j] < 1)
      call.fail("output size", ">= 1 in spatial dim " + std::to_string(j),
                std::to_string(g.out[j]) + " (pads larger than the full output)");
  }
  return g;
}

Shape out_shape(const Geo& g) {
  return g.cl ? Shape{g.n, g.out[0], g.out[1], g.cout} : Shape{g.n, g.cout, g.out[0], g.out[1]};
}

std::vector<TensorDesc> infer(const OpCall& call) {
  ops::require_float(call, 0);
  ops::require_float(call, 1);
  ops::require_rank(call, 0, 4);
  ops::require_rank(call, 1, 4);
  (void)act_of(call);
  const Geo g = geometry(call);
  if (call.has_input(2)) {
    ops::require_float(call, 2);
    ops::require_shape(call, 2, {g.cout});
  }
  return {TensorDesc(call.in(0).dtype, out_shape(g))};
}

// Scatter form in double (the kernel gathers): an independent statement.
void reference(const OpCall& call, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
  const Geo g = geometry(call);
  const int64_t cin_g = g.cin / g.groups, cout_g = g.cout / g.groups;
  const int64_t P = g.out[0] * g.out[1], Pin = g.in[0] * g.in[1];
  std::vector<double>& y = out[0].data;
  std::fill(y.begin(), y.end(), 0.0);
  auto yi = [&](int64_t n, int64_t c, int64_t pix) {
    return static_cast<size_t>(g.cl ? (n * P + pix) * g.cout + c : (n * g.cout + c) * P + pix);
  };
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t ic = 0; ic < g.cin; ++ic)
      for (int64_t ih = 0; ih < g.in[0]; ++ih)
        for (int64_t iw = 0; iw < g.in[1]; ++iw) {
          const int64_t ipix = ih * g.in[1] + iw;
          const double xv = in[0].data[static_cast<size_t>(g.cl ? (n * Pin + ipix) * g.cin + ic
                                                                : (n * g.cin + ic) * Pin + ipix)];
          const int64_t grp = ic / cin_g;
          for (int64_t oc = 0; oc < cout_g; ++oc)
            for (int64_t kh = 0; kh < g.k[0]; ++kh)
              for (int64_t kw = 0; kw < g.k[1]; ++kw) {
                const int64_t oh = ih * g.s[0] - g.pb[0] + kh * g.d[0];
                const int64_t ow = iw * g.s[1] - g.pb[1] + kw * g.d[1];
                if (oh < 0 || oh >= g.out[0] || ow < 0 || ow >= g.out[1]) continue;
                const double wv = in[1].data[static_cast<size_t>(
                    ((ic * cout_g + oc) * g.k[0] + kh) * g.k[1] + kw)];
                y[yi(n, grp * cout_g + oc, oh * g.out[1] + ow)] += xv * wv;
              }
        }
  const gemm::Act act = act_of(call);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.cout; ++c)
      for (int64_t p = 0; p < P; ++p) {
        double& v = y[yi(n, c, p)];
        if (call.has_input(2)) v += in[2].data[static_cast<size_t>(c)];
        v = ref_act(v, act);
      }
}

template <class T>
void store_as(T* p, float v) {
  if constexpr (std::is_same_v<T, float>)
    *p = v;
  else if constexpr (std::is_same_v<T, bf16>)
    *p = to_bf16(v);
  else
    *p = to_f16(v);
}

class Instance : public KernelInstance {
 public:
  Instance(const OpCall& call, Isa isa) : g_(geometry(call)) {
    gp_ = gemm::default_params(isa, 0);
    wt_ = call.in(1).dtype;
    xt_ = call.in(0).dtype;
    ot_ = call.out(0).dtype;
    act_ = act_of(call);
    cin_g_ = g_.cin / g_.groups;
    cout_g_ = g_.cout / g_.groups;
    ncol_ = cout_g_ * g_.k[0] * g_.k[1];
    group_pack_ = round64(gemm::packed_b_bytes(gp_, cin_g_, ncol_, wt_));
    cols_ = round64(static_cast<size_t>(g_.in[0] * g_.in[1] * ncol_) * sizeof(float));
    bias_ = round64(static_cast<size_t>(g_.cout) * sizeof(float));
    reorder_ = round64(static_cast<size_t>(cin_g_ * ncol_) * dtype_size(wt_));
    threads_ = std::max(num_threads(), 1);
    gemm_ = round64(gemm::workspace_bytes(gp_, g_.in[0] * g_.in[1], ncol_, cin_g_, DType::f32,
                                          ncol_, false, threads_));
    if (const Tensor* w = call.constant(1)) {
      // A constant weight is packed once, here.
      packed_ = Tensor::empty({static_cast<int64_t>(packed_bytes())}, DType::u8);
      Tensor scratch = Tensor::empty({static_cast<int64_t>(reorder_)}, DType::u8);
      pack(*w, static_cast<std::byte*>(packed_.data()), static_cast<char*>(scratch.data()));
      prepacked_ = true;
    } else {
      log_once(LogLevel::info, "conv_transpose-weight-per-call",
               "conv_transpose2d: weight is not a constant operand; packed per call into the "
               "workspace (correct, slower)");
    }
  }
  size_t workspace_bytes() const override {
    return (prepacked_ ? 0 : packed_bytes() + reorder_) + bias_ + cols_ + gemm_;
  }
  void run(const Tensor* in, Tensor* out, void* ws) override {
    std::byte* base = static_cast<std::byte*>(ws);
    const std::byte* packed = static_cast<const std::byte*>(packed_.data());
    if (!prepacked_) {
      pack(in[1], base, reinterpret_cast<char*>(base + packed_bytes()));
      packed = base;
      base += packed_bytes() + reorder_;
    }
    // The bias in f32 (any float dtype in), once per call.
    float* bias = nullptr;
    if (in[2].data()) {
      bias = reinterpret_cast<float*>(base);
      for (int64_t c = 0; c < g_.cout; ++c) bias[c] = static_cast<float>(in[2].flat_get(c));
    }
    float* cols = reinterpret_cast<float*>(base + bias_);
    const gemm::Workspace gws{base + bias_ + cols_, threads_};
    const size_t ex = dtype_size(xt_);
    const int64_t Pin = g_.in[0] * g_.in[1];
    for (int64_t n = 0; n < g_.n; ++n)
      for (int64_t gi = 0; gi < g_.groups; ++gi) {
        const char* x = static_cast<const char*>(in[0].data());
        const gemm::MatView a =
            g_.cl ? gemm::MatView{x + static_cast<size_t>(n * Pin * g_.cin + gi * cin_g_) * ex, xt_,
                                  g_.cin, 1}
                  : gemm::MatView{x + static_cast<size_t>((n * g_.cin + gi * cin_g_) * Pin) * ex,
                                  xt_, 1, Pin};
        gemm::run(gp_, Pin, ncol_, cin_g_, a, packed + static_cast<size_t>(gi) * group_pack_, wt_,
                  {cols, DType::f32, ncol_}, gemm::Epilogue{}, gws);
        if (ot_ == DType::f32)
          gather(cols, bias, n, gi, out[0].data_as<float>());
        else if (ot_ == DType::bf16)
          gather(cols, bias, n, gi, out[0].data_as<bf16>());
        else
          gather(cols, bias, n, gi, out[0].data_as<f16>());
      }
  }

 private:
  static size_t round64(size_t b) { return (b + 63) / 64 * 64; }
  size_t packed_bytes() const { return group_pack_ * static_cast<size_t>(g_.groups); }
  // Per group: W_g [cin_g][cout_g][taps] (ONNX) reordered in `scratch` to
  // columns (tap, oc), so that a tap's output channels are contiguous in
  // the GEMM's output rows (the gather reads them as one run), then packed.
  void pack(const Tensor& w, std::byte* dst, char* scratch) const {
    const size_t ew = dtype_size(wt_);
    const int64_t taps = g_.k[0] * g_.k[1];
    for (int64_t gi = 0; gi < g_.groups; ++gi) {
      const char* wg =
          static_cast<const char*>(w.data()) + static_cast<size_t>(gi * cin_g_ * ncol_) * ew;
      for (int64_t ic = 0; ic < cin_g_; ++ic)
        for (int64_t oc = 0; oc < cout_g_; ++oc)
          for (int64_t t = 0; t < taps; ++t)
            std::memcpy(scratch + static_cast<size_t>(ic * ncol_ + t * cout_g_ + oc) * ew,
                        wg + static_cast<size_t>(ic * ncol_ + oc * taps + t) * ew, ew);
      gemm::pack_b(gp_, cin_g_, ncol_, {scratch, wt_, ncol_, 1},
                   dst + static_cast<size_t>(gi) * group_pack_, wt_);
    }
  }

  // The taps of spatial dim `dim` that land on output index o: (o + pb -
  // k d) divisible by s and in range; their k and input index, in order.
  int64_t taps_landing(int dim, int64_t o, int64_t* k_of, int64_t* i_of) const {
    int64_t n = 0;
    for (int64_t k = 0; k < g_.k[dim] && n < 64; ++k) {
      const int64_t t = o + g_.pb[dim] - k * g_.d[dim];
      if (t < 0 || t % g_.s[dim] != 0 || t / g_.s[dim] >= g_.in[dim]) continue;
      k_of[n] = k;
      i_of[n++] = t / g_.s[dim];
    }
    return n;
  }

  // Each output pixel sums the GEMM rows of the input pixels its taps come
  // from, (kh, kw) in order, over runs of output channels (contiguous in the
  // tap-major columns), then bias and activation.
  template <class T>
  void gather(const float* cols, const float* bias, int64_t n, int64_t gi, T* y) const {
    const int64_t P = g_.out[0] * g_.out[1];
    constexpr int64_t kRun = 256;  // output channels per pass
    parallel_for(g_.out[0], 1, [&](int64_t h0, int64_t h1) {
      int64_t th[64], ih[64], tw[64], iw[64];
      alignas(64) float acc[kRun];
      for (int64_t oh = h0; oh < h1; ++oh) {
        const int64_t nh = taps_landing(0, oh, th, ih);
        for (int64_t ow = 0; ow < g_.out[1]; ++ow) {
          const int64_t nw = taps_landing(1, ow, tw, iw);
          const int64_t pix = oh * g_.out[1] + ow;
          for (int64_t o0 = 0; o0 < cout_g_; o0 += kRun) {
            const int64_t len = std::min(kRun, cout_g_ - o0);
            std::fill(acc, acc + len, 0.0f);
            for (int64_t a = 0; a < nh; ++a)
              for (int64_t b = 0; b < nw; ++b) {
                const float* src = cols + (ih[a] * g_.in[1] + iw[b]) * ncol_ +
                                   (th[a] * g_.k[1] + tw[b]) * cout_g_ + o0;
                for (int64_t j = 0; j < len; ++j) acc[j] += src[j];
              }
            for (int64_t j = 0; j < len; ++j) {
              const int64_t c = gi * cout_g_ + o0 + j;
              float v = acc[j];
              if (bias) v += bias[c];
              store_as(y + (g_.cl ? (n * P + pix) * g_.cout + c : (n * g_.cout + c) * P + pix),
                       act(v));
            }
          }
        }
      }
    });
  }

  float act(float v) const {
    return act_ == gemm::Act::none ? v : static_cast<float>(ref_act(v, act_));
  }

  Geo g_;
  gemm::Params gp_;
  DType wt_ = DType::f32, xt_ = DType::f32, ot_ = DType::f32;
  gemm::Act act_ = gemm::Act::none;
  int64_t cin_g_ = 0, cout_g_ = 0, ncol_ = 0;
  size_t group_pack_ = 0, cols_ = 0, bias_ = 0, gemm_ = 0;
  size_t reorder_ = 0;  // the weight reordered to tap-major columns before packing
  int threads_ = 1;     // the GEMM scratch's thread slots (the count at create)
  Tensor packed_;
  bool prepacked_ = false;
};

using IL = std::vector<int64_t>;

std::vector<CheckCase> cases(DType t) {
  std::vector<CheckCase> cs;
  auto add = [&](const std::string& name, Shape x, Shape w, Attrs a, bool bias) {
    CheckCase c{
        name, {TensorDesc(t, x), TensorDesc(t, w)}, std::move(a), {{-1, 1}, {-1, 1}, {-1, 1}}};
    c.inputs.push_back(bias
                           ? TensorDesc(t, {w[1] * (c.attrs.has("group") ? c.attrs.i("group") : 1)})
                           : TensorDesc::none());
    int64_t kg = w[0] * w[2] * w[3];
    c.tol_scale = std::max(1.0, std::sqrt(static_cast<double>(kg)) / 2);
    cs.push_back(std::move(c));
  };
  add("k2 stride 2 [1,4,5,5]->3", {1, 4, 5, 5}, {4, 3, 2, 2}, {{"strides", IL{2, 2}}}, true);
  add("k3 stride 2 pad 1 output_padding 1 [2,5,7,6]->4", {2, 5, 7, 6}, {5, 4, 3, 3},
      {{"strides", IL{2, 2}}, {"pads", IL{1, 1, 1, 1}}, {"output_padding", IL{1, 1}}}, true);
  add("k4 stride 2 pad 1 NHWC [1,6,6,7]->5 silu", {1, 6, 6, 7}, {7, 5, 4, 4},
      {{"strides", IL{2, 2}},
       {"pads", IL{1, 1, 1, 1}},
       {"layout", std::string("NHWC")},
       {"activation", std::string("silu")}},
      true);
  add("k3 dilation 2 groups 2 [1,6,5,4]->4", {1, 6, 5, 4}, {6, 2, 3, 3},
      {{"dilations", IL{2, 2}}, {"group", int64_t{2}}}, false);
  add("depthwise k3 stride 2 [1,5,4,4]", {1, 5, 4, 4}, {5, 1, 3, 3},
      {{"strides", IL{2, 2}}, {"group", int64_t{5}}}, true);
  add("output_shape 10x9 stride 2 [1,3,5,5]->2", {1, 3, 5, 5}, {3, 2, 3, 3},
      {{"strides", IL{2, 2}}, {"output_shape", IL{10, 9}}}, false);
  add("SAME_UPPER stride 2 [1,3,4,5]->2", {1, 3, 4, 5}, {3, 2, 3, 3},
      {{"strides", IL{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}, false);
  add("SAME_LOWER stride 3 [1,3,3,3]->2", {1, 3, 3, 3}, {3, 2, 4, 4},
      {{"strides", IL{3, 3}}, {"auto_pad", std::string("SAME_LOWER")}}, false);
  add("k1 [1,17,3,3]->19", {1, 17, 3, 3}, {17, 19, 1, 1}, {}, true);
  add("asym pads stride (1,3) [1,4,6,5]->3", {1, 4, 6, 5}, {4, 3, 3, 2},
      {{"strides", IL{1, 3}}, {"pads", IL{0, 1, 2, 0}}}, false);
  add("empty batch [0,2,3,3]->2", {0, 2, 3, 3}, {2, 2, 3, 3}, {}, false);
  // More output channels than one run of the gather (256), NHWC and NCHW.
  add("k4 stride 2 pad 1 NHWC [1,3,4,6]->300 gelu", {1, 3, 4, 6}, {6, 300, 4, 4},
      {{"strides", IL{2, 2}},
       {"pads", IL{1, 1, 1, 1}},
       {"layout", std::string("NHWC")},
       {"activation", std::string("gelu")}},
      true);
  add("k2 stride 2 [1,5,3,2]->270", {1, 5, 3, 2}, {5, 270, 2, 2}, {{"strides", IL{2, 2}}}, true);
  return cs;
}

CheckCase bench_case(const std::map<std::string, std::string>& kv, DType t) {
  ops::CaseKeys keys("conv_transpose2d", kv);
  const int64_t n = keys.i("n", 1), cin = keys.i("cin", 320), cout = keys.i("cout", 320),
                h = keys.i("h", 32), w = keys.i("w", 32), k = keys.i("k", 4),
                s = keys.i("stride", 2), p = keys.i("pad", 1);
  const std::string layout = keys.s("layout", "NHWC");
  keys.done();
  CheckCase c{"bench",
              {TensorDesc(t, layout == "NHWC" ? Shape{n, h, w, cin} : Shape{n, cin, h, w}),
               TensorDesc(t, {cin, cout, k, k}), TensorDesc(t, {cout})},
              {{"strides", IL{s, s}}, {"pads", IL{p, p, p, p}}, {"layout", layout}},
              {{-1, 1}, {-1, 1}, {-1, 1}}};
  return c;
}

void cost(const OpCall& call, double* bytes, double* flops) {
  double b = 0;
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (call.has_input(i))
      b += static_cast<double>(call.in(i).numel()) *
           static_cast<double>(dtype_size(call.in(i).dtype));
  b +=
      static_cast<double>(call.out(0).numel()) * static_cast<double>(dtype_size(call.out(0).dtype));
  *bytes = b;
  const Shape& ws = call.in(1).shape;
  *flops =
      2.0 * static_cast<double>(call.in(0).numel()) * static_cast<double>(ws[1] * ws[2] * ws[3]);
}

}  // namespace

void register_conv_transpose(Registry& reg) {
  OpSchema s;
  s.name = "conv_transpose2d";
  s.family = "conv";
  s.doc = "ONNX ConvTranspose (2-D) with bias and a fused activation";
  s.inputs = {{"x", "[N, Cin, H, W] (NCHW) or [N, H, W, Cin] (NHWC)"},
              {.name = "w", .doc = "[Cin, Cout / group, kh, kw] (ONNX layout)", .weight = true},
              {"bias", "[Cout]", true}};
  s.outputs = {{"y", "[N, Cout, OH, OW] or [N, OH, OW, Cout], dtype of x"}};
  s.attrs = window_attrs();
  s.attrs.push_back({"output_padding", AttrType::i64s, std::vector<int64_t>{},
                     "added to the end of each output dim (default 0)"});
  s.attrs.push_back({"output_shape", AttrType::i64s, std::vector<int64_t>{},
                     "[OH, OW]: pads derived from it (ONNX rules)"});
  s.attrs.push_back({"group", AttrType::i64, int64_t{1}, "channel groups"});
  s.attrs.push_back(layout_attr());
  s.attrs.push_back(activation_attr());
  s.dtypes = ops::kFloatDTypes;
  s.infer = infer;
  s.reference = reference;
  s.cases = cases;
  s.tolerance = default_tolerance;
  s.bench_case = bench_case;
  s.cost = cost;
  reg.add_op(std::move(s));
  ops::add_isa_kernels(
      reg, "conv_transpose2d", ops::PerIsa<Isa>{Isa::avx512, Isa::avx2, Isa::scalar},
      [](Isa isa, Isa) -> KernelFactory {
        return [isa](const OpCall& call, std::string*) -> std::unique_ptr<KernelInstance> {
          return std::make_unique<Instance>(call, isa);
        };
      },
      "conv_transpose2d_gemm_");
}

}  // namespace opsnn::conv

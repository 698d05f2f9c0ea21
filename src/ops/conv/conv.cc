// conv1d, conv2d, conv3d: schemas, shape inference, the float64 reference,
// the case table and kernel registration. One engine (conv_engine.h) for all
// spatial ranks; ONNX Conv semantics plus a fused epilogue:
//   y = act(conv(x, w) + bias) + residual
#include <cmath>
#include <map>
#include <string>

#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "ops/conv/conv_act.h"
#include "ops/conv/conv_amx.h"
#include "ops/conv/conv_engine.h"
#include "ops/conv/conv_family.h"

namespace opsnn::conv {
namespace {

struct Geo {
  Window w;
  bool cl = false;
  int64_t n = 0, cin = 0, cout = 0, groups = 1;
};

Geo geometry(const OpCall& call, int r) {
  Geo g;
  const Shape& xs = call.in(0).shape;
  const Shape& ws = call.in(1).shape;
  g.cl = channels_last(call);
  g.n = xs[0];
  g.cin = g.cl ? xs.back() : xs[1];
  g.cout = ws[0];
  g.groups = call.attrs.i("group");
  std::vector<int64_t> k(ws.begin() + 2, ws.end());
  g.w = make_window(call, spatial_dims(xs, g.cl), k);
  (void)r;
  return g;
}

std::vector<TensorDesc> infer(const OpCall& call, int r) {
  ops::require_float(call, 0);
  ops::require_float(call, 1);
  ops::require_rank(call, 0, r + 2);
  ops::require_rank(call, 1, r + 2);
  const bool cl = channels_last(call);
  const Shape& xs = call.in(0).shape;
  const Shape& ws = call.in(1).shape;
  const int64_t cin = cl ? xs.back() : xs[1];
  const int64_t groups = call.attrs.i("group");
  if (groups < 1) call.fail("attribute 'group'", ">= 1", std::to_string(groups));
  if (cin < 1) call.fail("x", "at least one input channel", shape_str(xs));
  if (ws[0] < 1) call.fail("w", "at least one output channel", shape_str(ws));
  if (cin % groups != 0)
    call.fail("attribute 'group'", "a divisor of the input channels " + std::to_string(cin),
              std::to_string(groups));
  if (ws[0] % groups != 0)
    call.fail("attribute 'group'", "a divisor of the output channels " + std::to_string(ws[0]),
              std::to_string(groups));
  if (ws[1] != cin / groups)
    call.fail("w", "dim 1 = input channels / group = " + std::to_string(cin / groups),
              shape_str(ws));
  for (size_t i = 2; i < ws.size(); ++i)
    if (ws[i] < 1) call.fail("w", "kernel sizes >= 1", shape_str(ws));
  (void)act_of(call);
  const Geo g = geometry(call, r);
  const Shape out = nc_shape(g.n, g.cout, g.w, cl);
  if (call.has_input(2)) {
    ops::require_float(call, 2);
    ops::require_shape(call, 2, {g.cout});
  }
  if (call.has_input(3)) {
    ops::require_float(call, 3);
    ops::require_shape(call, 3, out);
  }
  return {TensorDesc(call.in(0).dtype, out)};
}

void reference(const OpCall& call, int r, const std::vector<RefTensor>& in,
               std::vector<RefTensor>& out) {
  const Geo g = geometry(call, r);
  const Window& w = g.w;
  const gemm::Act act = act_of(call);
  const int64_t cin_g = g.cin / g.groups, cout_g = g.cout / g.groups;
  const int64_t P = w.out_size(), plane = w.in_size();
  const std::vector<double>& x = in[0].data;
  const std::vector<double>& wt = in[1].data;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oc = 0; oc < g.cout; ++oc)
      for (int64_t m = 0; m < P; ++m) {
        const int64_t od = m / (w.out[1] * w.out[2]), oh = m / w.out[2] % w.out[1],
                      ow = m % w.out[2];
        const int64_t grp = oc / cout_g;
        double acc = call.has_input(2) ? in[2].data[static_cast<size_t>(oc)] : 0.0;
        for (int64_t ic = 0; ic < cin_g; ++ic)
          for (int64_t kd = 0; kd < w.k[0]; ++kd)
            for (int64_t kh = 0; kh < w.k[1]; ++kh)
              for (int64_t kw = 0; kw < w.k[2]; ++kw) {
                const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
                const int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1];
                const int64_t iw = ow * w.s[2] - w.pb[2] + kw * w.d[2];
                const double wv = wt[static_cast<size_t>(
                    ((oc * cin_g + ic) * w.k[0] + kd) * w.k[1] * w.k[2] + kh * w.k[2] + kw)];
                double xv = 0;  // padding is zero (times the weight, as in PyTorch)
                if (id >= 0 && id < w.in[0] && ih >= 0 && ih < w.in[1] && iw >= 0 && iw < w.in[2]) {
                  const int64_t c = grp * cin_g + ic, pix = (id * w.in[1] + ih) * w.in[2] + iw;
                  xv = x[static_cast<size_t>(g.cl ? (n * plane + pix) * g.cin + c
                                                  : (n * g.cin + c) * plane + pix)];
                }
                acc += xv * wv;
              }
        const size_t o =
            static_cast<size_t>(g.cl ? (n * P + m) * g.cout + oc : (n * g.cout + oc) * P + m);
        double v = ref_act(acc, act);
        if (call.has_input(3)) v += in[3].data[o];
        out[0].data[o] = v;
      }
}

// One case: x [n, cin, sp...] (or channels last), w [cout, cin/g, k...].
struct CaseSpec {
  std::string name;
  int64_t n, cin, cout;
  std::vector<int64_t> sp, k;
  Attrs attrs;
  bool bias = false, residual = false;
};

CheckCase make_case(const CaseSpec& c, DType t, int r) {
  const bool cl =
      c.attrs.has("layout") && std::get<std::string>(c.attrs.values().at("layout")) == "NHWC";
  const int64_t groups = c.attrs.has("group") ? c.attrs.i("group") : 1;
  Shape xs{c.n};
  if (!cl) xs.push_back(c.cin);
  xs.insert(xs.end(), c.sp.begin(), c.sp.end());
  if (cl) xs.push_back(c.cin);
  Shape ws{c.cout, c.cin / groups};
  ws.insert(ws.end(), c.k.begin(), c.k.end());
  CheckCase cc;
  cc.name = c.name;
  cc.attrs = c.attrs;
  cc.inputs = {TensorDesc(t, xs), TensorDesc(t, ws)};
  cc.ranges = {{-1, 1}, {-1, 1}, {-1, 1}, {-2, 2}};
  cc.inputs.push_back(c.bias ? TensorDesc(t, {c.cout}) : TensorDesc::none());
  if (c.residual) {
    // The output shape, from the op's own shape inference.
    std::vector<TensorDesc> probe = cc.inputs;
    probe.push_back(TensorDesc::none());
    const OpCall call = make_call(Registry::global().schema(conv_name(r)), probe, c.attrs);
    cc.inputs.push_back(TensorDesc(t, call.out(0).shape));
  } else {
    cc.inputs.push_back(TensorDesc::none());
  }
  int64_t kg = c.cin / groups;
  for (int64_t k : c.k) kg *= k;
  // Each output is one f32 sum of kg products, as in matmul (tol_for_k):
  // sqrt(kg). With sqrt(kg) / 2, one draw of the 512-channel 3x3 case
  // (K = 4608) failed the direct kernel by its rounding alone (5.7e-5 against
  // the float64 sum of terms whose partial sums reach ~5).
  cc.tol_scale = std::max(1.0, std::sqrt(static_cast<double>(kg)));
  return cc;
}

using IL = std::vector<int64_t>;

std::vector<CheckCase> cases(int r, DType t) {
  std::vector<CaseSpec> cs;
  const Attrs nhwc{{"layout", std::string("NHWC")}};
  if (r == 2) {
    cs = {
        {"1x1 [1,8,7,7]->16 bias", 1, 8, 16, {7, 7}, {1, 1}, {}, true},
        {"1x1 NHWC [2,7,7,19]->5", 2, 19, 5, {7, 7}, {1, 1}, nhwc},
        {"1x1 stride 2 [1,6,9,9]->3", 1, 6, 3, {9, 9}, {1, 1}, {{"strides", IL{2, 2}}}},
        {"3x3 pad 1 [1,3,7,7]->5 bias relu",
         1,
         3,
         5,
         {7, 7},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"activation", std::string("relu")}},
         true},
        {"3x3 stride 2 pad 1 [2,4,33,33]->8",
         2,
         4,
         8,
         {33, 33},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"strides", IL{2, 2}}}},
        {"5x5 dilation 2 asym pads [1,6,13,11]->7",
         1,
         6,
         7,
         {13, 11},
         {5, 5},
         {{"pads", IL{2, 1, 3, 2}}, {"dilations", IL{2, 2}}},
         true},
        {"7x7 stride 2 pad 3 NHWC [1,33,33,3]->16 bias silu",
         1,
         3,
         16,
         {33, 33},
         {7, 7},
         {{"pads", IL{3, 3, 3, 3}},
          {"strides", IL{2, 2}},
          {"layout", std::string("NHWC")},
          {"activation", std::string("silu")}},
         true},
        // Few channels, more output channels than a register panel (the
        // UNet's stem: whole panels on the direct kernel's fast path, a
        // partial one after them) and a partial last pixel tile.
        {"3x3 pad 1 NHWC [1,13,9,4]->40 bias silu (stem)",
         1,
         4,
         40,
         {13, 9},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}},
          {"layout", std::string("NHWC")},
          {"activation", std::string("silu")}},
         true},
        // An even channel count (bf16 runs path on AVX512_BF16), bias and
        // no activation (its register epilogue), whole panels only, and a
        // last tile of one pixel (99 = 7 x 14 + 1).
        {"3x3 pad 1 NHWC [1,9,11,6]->64 bias (stem)",
         1,
         6,
         64,
         {9, 11},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"layout", std::string("NHWC")}},
         true},
        {"3x3 pad 1 NHWC [2,11,10,5]->36 bias relu (stem)",
         2,
         5,
         36,
         {11, 10},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}},
          {"layout", std::string("NHWC")},
          {"activation", std::string("relu")}},
         true},
        {"3x3 groups 2 [1,8,9,9]->6",
         1,
         8,
         6,
         {9, 9},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"group", int64_t{2}}},
         true},
        {"3x3 depthwise NHWC [2,9,9,17]",
         2,
         17,
         17,
         {9, 9},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"group", int64_t{17}}, {"layout", std::string("NHWC")}},
         true},
        {"3x3 depthwise x2 stride 2 dilation 2 [1,4,11,11]->8",
         1,
         4,
         8,
         {11, 11},
         {3, 3},
         {{"pads", IL{2, 2, 2, 2}},
          {"group", int64_t{4}},
          {"strides", IL{2, 2}},
          {"dilations", IL{2, 2}}}},
        {"SAME_UPPER 3x3 stride 2 [1,5,8,9]->4",
         1,
         5,
         4,
         {8, 9},
         {3, 3},
         {{"auto_pad", std::string("SAME_UPPER")}, {"strides", IL{2, 2}}}},
        {"SAME_LOWER 4x4 stride 2 NHWC [1,7,7,5]->4",
         1,
         5,
         4,
         {7, 7},
         {4, 4},
         {{"auto_pad", std::string("SAME_LOWER")},
          {"strides", IL{2, 2}},
          {"layout", std::string("NHWC")}}},
        {"VALID 3x3 [1,5,7,7]->3", 1, 5, 3, {7, 7}, {3, 3}, {{"auto_pad", std::string("VALID")}}},
        {"spatial 1 3x3 pad 1 [1,5,1,1]->3",
         1,
         5,
         3,
         {1, 1},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}},
         true},
        {"1x3 stride (1,2) [1,3,5,9]->2",
         1,
         3,
         2,
         {5, 9},
         {1, 3},
         {{"strides", IL{1, 2}}, {"pads", IL{0, 1, 0, 1}}}},
        {"3x3 bias gelu residual [1,12,11,11]->20",
         1,
         12,
         20,
         {11, 11},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"activation", std::string("gelu")}},
         true,
         true},
        {"3x3 NHWC bias gelu_tanh residual [2,6,6,10]->18",
         2,
         10,
         18,
         {6, 6},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}},
          {"activation", std::string("gelu_tanh")},
          {"layout", std::string("NHWC")}},
         true,
         true},
        {"1x1 NHWC residual [1,5,5,24]->40", 1, 24, 40, {5, 5}, {1, 1}, nhwc, false, true},
        {"3x3 [1,40,17,17]->36", 1, 40, 36, {17, 17}, {3, 3}, {{"pads", IL{1, 1, 1, 1}}}, true},
        {"3x3 NHWC [1,6,5,300]->20 bias silu residual",
         1,
         300,
         20,
         {6, 5},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}},
          {"layout", std::string("NHWC")},
          {"activation", std::string("silu")}},
         true,
         true},
        {"5x5 NHWC 2 channel blocks [1,3,4,520]->8 bias",
         1,
         520,
         8,
         {3, 4},
         {5, 5},
         {{"pads", IL{2, 2, 2, 2}}, {"layout", std::string("NHWC")}},
         true},
        {"3x3 several tiles [1,512,17,17]->8",
         1,
         512,
         8,
         {17, 17},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}}},
        // Weights of 1.3 MB, over half of a 2 MiB L2: the direct kernel's
        // tasks take runs of panels (AVX2: 3 + 2), the last panel partial.
        {"3x3 pad 1 NHWC panel runs [1,6,7,512]->72 bias",
         1,
         512,
         72,
         {6, 7},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"layout", std::string("NHWC")}},
         true},
        // One GEMM tile per image, >= 4 tiles: threads take whole tiles.
        {"batch 4 (tiles over threads) [4,5,6,6]->7 bias relu",
         4,
         5,
         7,
         {6, 6},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"activation", std::string("relu")}},
         true},
        {"batch 5 NHWC (tiles over threads) [5,4,3,3]->6 residual",
         5,
         3,
         6,
         {4, 3},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"layout", std::string("NHWC")}},
         false,
         true},
        {"empty batch [0,3,5,5]->4", 0, 3, 4, {5, 5}, {3, 3}, {}},
        // Last, so the cases above keep their seeds. No padding and a wide
        // row: whole tiles inside the input, where the direct kernel reads a
        // kernel row as one run only when one group spans a pixel's channels.
        {"3x3 groups 2 no pad NHWC [1,7,40,8]->6 bias",
         1,
         8,
         6,
         {7, 40},
         {3, 3},
         {{"group", int64_t{2}}, {"layout", std::string("NHWC")}},
         true},
        // The depthwise kernel (one channel per group): channel counts off the
        // vector width, NCHW through its boundary transposes, every epilogue,
        // stride, dilation, asymmetric and auto pads, rows of several tiles.
        {"3x3 depthwise NCHW [2,37,13,11] bias silu residual",
         2,
         37,
         37,
         {13, 11},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"group", int64_t{37}}, {"activation", std::string("silu")}},
         true,
         true},
        {"5x5 depthwise stride 2 asym pads NHWC [1,15,14,70] bias gelu",
         1,
         70,
         70,
         {15, 14},
         {5, 5},
         {{"pads", IL{2, 1, 1, 2}},
          {"strides", IL{2, 2}},
          {"group", int64_t{70}},
          {"layout", std::string("NHWC")},
          {"activation", std::string("gelu")}},
         true},
        {"7x7 depthwise dilation 2 SAME_UPPER NHWC [1,9,20,33] residual",
         1,
         33,
         33,
         {9, 20},
         {7, 7},
         {{"auto_pad", std::string("SAME_UPPER")},
          {"dilations", IL{2, 2}},
          {"group", int64_t{33}},
          {"layout", std::string("NHWC")}},
         false,
         true},
        // More channels than one block of the kernel (224 for a 3x3 kernel).
        {"3x3 depthwise NHWC [1,5,9,260] bias relu",
         1,
         260,
         260,
         {5, 9},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}},
          {"group", int64_t{260}},
          {"layout", std::string("NHWC")},
          {"activation", std::string("relu")}},
         true},
        // Channels first: the native kernel (stride 1 along W; rows of more
        // than 8 vectors, dilation) and the transposes (stride 2 along W).
        {"5x5 depthwise dilation 2 NCHW [1,6,9,150] bias gelu",
         1,
         6,
         6,
         {9, 150},
         {5, 5},
         {{"pads", IL{4, 4, 4, 4}},
          {"dilations", IL{2, 2}},
          {"group", int64_t{6}},
          {"activation", std::string("gelu")}},
         true},
        {"3x3 depthwise stride 2 NCHW [1,5,11,12] residual",
         1,
         5,
         5,
         {11, 12},
         {3, 3},
         {{"pads", IL{1, 1, 1, 1}}, {"strides", IL{2, 2}}, {"group", int64_t{5}}},
         false,
         true},
        {"3x3 depthwise VALID NHWC [1,4,40,16] relu",
         1,
         16,
         16,
         {4, 40},
         {3, 3},
         {{"auto_pad", std::string("VALID")},
          {"group", int64_t{16}},
          {"layout", std::string("NHWC")},
          {"activation", std::string("relu")}}},
    };
  } else if (r == 1) {
    cs = {
        {"k3 pad 1 [2,5,33]->7 bias", 2, 5, 7, {33}, {3}, {{"pads", IL{1, 1}}}, true},
        {"k5 stride 2 dilation 2 NWC [1,17,6]->4",
         1,
         6,
         4,
         {17},
         {5},
         {{"strides", IL{2}}, {"dilations", IL{2}}, {"layout", std::string("NHWC")}}},
        {"k1 [1,3,7]->9 silu", 1, 3, 9, {7}, {1}, {{"activation", std::string("silu")}}, true},
        {"depthwise k3 SAME_UPPER [1,8,9]",
         1,
         8,
         8,
         {9},
         {3},
         {{"group", int64_t{8}}, {"auto_pad", std::string("SAME_UPPER")}}},
        // Causal depthwise conv1d as in Mamba blocks (kernel 4, left pad 3).
        {"depthwise k4 causal NCL [2,24,70] bias silu",
         2,
         24,
         24,
         {70},
         {4},
         {{"pads", IL{3, 0}}, {"group", int64_t{24}}, {"activation", std::string("silu")}},
         true},
        {"depthwise k4 causal NWC [2,19,24] bias silu",
         2,
         24,
         24,
         {19},
         {4},
         {{"pads", IL{3, 0}},
          {"group", int64_t{24}},
          {"layout", std::string("NHWC")},
          {"activation", std::string("silu")}},
         true},
    };
  } else {
    cs = {
        {"3x3x3 pad 1 [1,3,5,6,7]->4 bias",
         1,
         3,
         4,
         {5, 6, 7},
         {3, 3, 3},
         {{"pads", IL{1, 1, 1, 1, 1, 1}}},
         true},
        {"3x3x3 stride 2 NDHWC [1,7,7,7,5]->6 relu",
         1,
         5,
         6,
         {7, 7, 7},
         {3, 3, 3},
         {{"strides", IL{2, 2, 2}},
          {"layout", std::string("NHWC")},
          {"activation", std::string("relu")}}},
        {"1x3x3 groups 2 [2,4,3,5,5]->4 residual",
         2,
         4,
         4,
         {3, 5, 5},
         {1, 3, 3},
         {{"pads", IL{0, 1, 1, 0, 1, 1}}, {"group", int64_t{2}}},
         false,
         true},
        // More taps than the direct kernel's pointer table: one sub-block.
        {"3x5x5 NDHWC direct, 75 taps [1,3,5,6,36]->33 bias",
         1,
         36,
         33,
         {3, 5, 6},
         {3, 5, 5},
         {{"pads", IL{1, 2, 2, 1, 2, 2}}, {"layout", std::string("NHWC")}},
         true},
        {"3x3x3 depthwise NCDHW [1,4,5,6,7] bias residual",
         1,
         4,
         4,
         {5, 6, 7},
         {3, 3, 3},
         {{"pads", IL{1, 1, 1, 1, 1, 1}}, {"group", int64_t{4}}},
         true,
         true},
        {"3x3x3 depthwise NDHWC [1,5,6,7,12] bias",
         1,
         12,
         12,
         {5, 6, 7},
         {3, 3, 3},
         {{"pads", IL{1, 1, 1, 1, 1, 1}}, {"group", int64_t{12}}, {"layout", std::string("NHWC")}},
         true},
    };
  }
  std::vector<CheckCase> out;
  for (const CaseSpec& c : cs) out.push_back(make_case(c, t, r));
  return out;
}

CheckCase bench_case(int r, const std::map<std::string, std::string>& kv, DType t) {
  ops::CaseKeys keys(conv_name(r), kv);
  CaseSpec c;
  c.name = "bench";
  c.n = keys.i("n", 1);
  c.cin = keys.i("cin", 320);
  c.cout = keys.i("cout", 320);
  const char* sp[] = {"d", "h", "w"};
  const char* ks[] = {"kd", "kh", "kw"};
  for (int i = 3 - r; i < 3; ++i) {
    c.sp.push_back(keys.i(sp[i], 64));
    c.k.push_back(keys.i(ks[i], 3));
  }
  const int64_t stride = keys.i("stride", 1), pad = keys.i("pad", (c.k.back() - 1) / 2),
                dil = keys.i("dilation", 1);
  c.attrs.set("strides", IL(static_cast<size_t>(r), stride));
  c.attrs.set("pads", IL(static_cast<size_t>(2 * r), pad));
  c.attrs.set("dilations", IL(static_cast<size_t>(r), dil));
  c.attrs.set("group", keys.i("groups", 1));
  c.attrs.set("layout", keys.s("layout", "NHWC"));
  c.attrs.set("activation", keys.s("act", "none"));
  c.bias = keys.i("bias", 0) != 0;
  c.residual = keys.i("residual", 0) != 0;
  keys.done();
  return make_case(c, t, r);
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
  double kg = static_cast<double>(ws[1]);
  for (size_t i = 2; i < ws.size(); ++i) kg *= static_cast<double>(ws[i]);
  *flops = 2.0 * static_cast<double>(call.out(0).numel()) * kg;
}

void add_conv_op(Registry& reg, int r) {
  OpSchema s;
  s.name = conv_name(r);
  s.family = "conv";
  s.doc = "ONNX Conv (" + std::to_string(r) +
          "-D) with a fused epilogue: y = act(conv(x, w) + bias) + residual";
  s.inputs = {{"x", "[N, C, spatial...] (NCHW) or [N, spatial..., C] (NHWC)"},
              {.name = "w",
               .doc = "[Cout, C / group, kernel...] (ONNX layout for both data layouts)",
               .weight = true},
              {"bias", "[Cout]", true},
              {"residual", "output shape, added last", true}};
  s.outputs = {{"y", "[N, Cout, out...] or [N, out..., Cout], dtype of x"}};
  s.attrs = window_attrs();
  s.attrs.push_back({"group", AttrType::i64, int64_t{1}, "channel groups (C: depthwise)"});
  s.attrs.push_back(layout_attr());
  s.attrs.push_back(activation_attr());
  s.dtypes = ops::kFloatDTypes;
  s.infer = [r](const OpCall& call) { return infer(call, r); };
  s.reference = [r](const OpCall& call, const std::vector<RefTensor>& in,
                    std::vector<RefTensor>& out) { reference(call, r, in, out); };
  s.cases = [r](DType t) { return cases(r, t); };
  s.tolerance = default_tolerance;
  s.bench_case = [r](const std::map<std::string, std::string>& kv, DType t) {
    return bench_case(r, kv, t);
  };
  s.cost = cost;
  reg.add_op(std::move(s));
  ops::add_isa_kernels(
      reg, conv_name(r), ops::PerIsa<Isa>{Isa::avx512, Isa::avx2, Isa::scalar},
      [r](Isa isa, Isa) -> KernelFactory {
        return [r, isa](const OpCall& call, std::string*) {
          const Geo g = geometry(call, r);
          return make_conv_instance(call, conv_plan(call, g.w, g.cl), isa);
        };
      },
      conv_name(r) + "_gemm_");
  // bf16 on AMX tiles where the CPU has them (OPSNN_CPU_DISABLE=amx_bf16
  // hides it), ahead of the ISA kernels, which then take the other calls.
  KernelDesc amx;
  amx.name = conv_name(r) + "_amx";
  amx.isa = Isa::avx512;
  amx.cpu_ok = has_amx_bf16;
  amx.dtypes = {DType::bf16};
  amx.priority = ops::kPrioritySpecial;
  amx.create = [r](const OpCall& call, std::string* why) -> std::unique_ptr<KernelInstance> {
    const Geo g = geometry(call, r);
    const ConvPlan p = conv_plan(call, g.w, g.cl);
    if (!amx_conv_ok(call, p)) {
      if (why) *why = "bf16 x, w and y, f32 or bf16 bias and residual, not depthwise";
      return nullptr;
    }
    return make_amx_conv_instance(call, p);
  };
  reg.add_kernel(conv_name(r), std::move(amx));
}

}  // namespace

std::string conv_name(int r) { return "conv" + std::to_string(r) + "d"; }

void register_conv(Registry& r) {
  for (int rank = 1; rank <= 3; ++rank) add_conv_op(r, rank);
}

}  // namespace opsnn::conv

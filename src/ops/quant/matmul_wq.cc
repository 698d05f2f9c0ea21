// matmul_wq: weight-only quantized linear layer for LLM decode.
//   y[..., N] = x[..., K] @ W^T + bias,  W[n, k] = (q[n, k] - zp[n, g]) * scale[n, g], g = k /
//   group
// bits 8: q int8 [N, K]; bits 4: q unsigned 4-bit packed two per byte [N, K/2]
// (k even in the low nibble), zero point default 8 (i.e. signed 4-bit, -8..7).
// See docs/quantization.md for the layout and src/ops/quant/kernels/quant_impl.h
// for the kernel.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/checks.h"
#include "ops/quant/quant.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {

namespace quant {
int64_t wq_panel_cols(const WqPaths& paths, int nr, int64_t M) {
  const int64_t step = std::max(16, nr);  // both powers of two
  const int64_t c = paths.panel_cols;
  const int64_t w = c > 0 ? c : M < 512 ? 256 : 512;
  return (w + step - 1) / step * step;
}
int wq_panel_slots(const WqPaths& paths, int64_t M, int64_t N) {
  const int64_t w = wq_panel_cols(paths, 16, M), tasks = (N + w - 1) / w;
  const int cores = std::clamp(std::max(cpu_info().logical_cores, 2), 1, 256);
  return static_cast<int>(std::clamp<int64_t>(tasks, 1, cores));
}
gemm::Params wq_gemm_params(Isa isa, DType xt) {
  gemm::Params p = gemm::default_params(isa);
  // bf16 activations on a CPU with AVX512_BF16: bf16 panels and the engine's
  // vdpbf16ps path (x is bf16 already, so only the weights round once more).
  // Otherwise f32 panels and the f32 microkernel.
  p.bf16_dot = p.bf16_dot && xt == DType::bf16;
  return p;
}
WqSlot wq_slot(const WqPaths& paths, int64_t M, int64_t N, int64_t K, Isa isa, DType xt, DType yt,
               int threads) {
  auto round64 = [](size_t b) { return (b + 63) / 64 * 64; };
  const gemm::Params p = wq_gemm_params(isa, xt);
  const int64_t W = wq_panel_cols(paths, p.nr, M);
  WqSlot s;
  s.panel = round64(static_cast<size_t>(W * K) * sizeof(float));  // f32 panel (bf16 pairs: half)
  s.engine_threads = N <= W ? std::max(threads, 1) : 1;
  s.bytes = s.panel + round64(gemm::workspace_bytes(p, M, W, K, yt, N, false, s.engine_threads));
  return s;
}
size_t wq_workspace_bytes(const WqPaths& paths, int64_t M, int64_t N, int64_t K, int group, Isa isa,
                          DType xt, DType yt, int threads) {
  if (M >= paths.panel_min_m)  // one slot per panel task that runs at once
    return static_cast<size_t>(wq_panel_slots(paths, M, N)) *
               wq_slot(paths, M, N, K, isa, xt, yt, threads).bytes +
           64;
  return static_cast<size_t>(M * K + M * (K / group)) * sizeof(float) + 64;
}
}  // namespace quant

namespace {

struct WqShape {
  int64_t M = 0, N = 0, K = 0, G = 0;
  int bits = 4, group = 128;
};

WqShape wq_shape(const OpCall& call) {
  WqShape s;
  s.bits = static_cast<int>(call.attrs.i("bits"));
  s.group = static_cast<int>(call.attrs.i("group"));
  const TensorDesc &x = call.in(0), &w = call.in(1);
  s.K = x.shape.back();
  s.M = s.K ? x.numel() / s.K : 0;
  if (s.K == 0) {
    s.M = 1;
    for (size_t d = 0; d + 1 < x.shape.size(); ++d) s.M *= x.shape[d];
  }
  s.N = w.rank() == 2 ? w.shape[0] : 0;
  s.G = s.group ? s.K / s.group : 0;
  return s;
}

// bits 4 zero points packed two per byte ([N, ceil(G/2)] u8, group g in the
// low nibble of byte g/2 when g is even, in the high nibble when odd; as ONNX
// MatMulNBits stores them) rather than one per byte ([N, G]). The shape
// decides; with G = 1 both shapes are [N, 1] and the low nibble is used,
// which is the same value for a valid one-per-byte zero point (0..15).
bool zp_packed(const OpCall& call) {
  if (call.attrs.i("bits") != 4 || !call.has_input(3) || call.in(3).rank() != 2) return false;
  const int64_t group = call.attrs.i("group");
  const int64_t G = group ? call.in(0).shape.back() / group : 0;
  return call.in(3).shape[1] == (G + 1) / 2;
}

// Bounds the panel path's per-task f32 panel (panel_cols x K floats).
constexpr int64_t kMaxPanelCols = 4096;

quant::WqPaths paths_of(const OpCall& call) {
  quant::WqPaths p;
  p.panel_min_m = call.attrs.i("panel_min_m");
  p.panel_cols = call.attrs.i("panel_cols");
  return p;
}

void infer_checks(const OpCall& call) {
  ops::require_dtype(call, 0, {DType::f32, DType::bf16, DType::f16});
  ops::require_rank_at_least(call, 0, 1);
  const int64_t bits = call.attrs.i("bits"), group = call.attrs.i("group");
  if (bits != 4 && bits != 8) call.fail("attribute 'bits'", "4 or 8", std::to_string(bits));
  if (group != 32 && group != 64 && group != 128)
    call.fail("attribute 'group'", "32, 64 or 128", std::to_string(group));
  if (const int64_t m = call.attrs.i("panel_min_m"); m < 1)
    call.fail("attribute 'panel_min_m'", ">= 1", std::to_string(m));
  if (const int64_t c = call.attrs.i("panel_cols"); c < 0 || c > kMaxPanelCols)
    call.fail("attribute 'panel_cols'", "0 (automatic) to " + std::to_string(kMaxPanelCols),
              std::to_string(c));
  const int64_t K = call.in(0).shape.back();
  if (K % group != 0)
    call.fail(ops::input_name(call, 0), "last dim K a multiple of group " + std::to_string(group),
              std::to_string(K));
  ops::require_rank(call, 1, 2);
  ops::require_dtype(call, 1, {bits == 4 ? DType::u8 : DType::i8});
  const int64_t N = call.in(1).shape[0];
  const int64_t wk = bits == 4 ? K / 2 : K;
  ops::require_shape(call, 1, {N, wk});
  ops::require_dtype(call, 2, {DType::f32});
  ops::require_shape(call, 2, {N, K / group});
  if (call.has_input(3)) {
    ops::require_dtype(call, 3, {bits == 4 ? DType::u8 : DType::i8});
    if (!zp_packed(call)) ops::require_shape(call, 3, {N, K / group});
  }
  if (call.has_input(4)) {
    ops::require_dtype(call, 4, {call.in(0).dtype, DType::f32});
    ops::require_shape(call, 4, {N});
  }
}

// The unpacked zero points' share of the workspace (a multiple of 64 bytes,
// so the kernel's part stays aligned).
size_t zp_unpacked_bytes(const WqShape& s) {
  return static_cast<size_t>((s.N * s.G + 63) / 64 * 64);
}

ValueRange real(double lo, double hi) { return {lo, hi, false}; }
ValueRange ints(double lo, double hi) { return {lo, hi, true}; }

// zp: 0 none, 1 one per byte, 2 (bits 4) packed two per byte.
CheckCase make_case(std::string name, DType t, Shape xs, int64_t N, int bits, int group, int zp,
                    bool bias) {
  const int64_t K = xs.back();
  CheckCase c;
  c.name = std::move(name);
  c.keep_dtypes = true;
  c.inputs = {TensorDesc(t, xs),
              TensorDesc(bits == 4 ? DType::u8 : DType::i8, {N, bits == 4 ? K / 2 : K}),
              TensorDesc(DType::f32, {N, K / group}),
              zp == 0   ? TensorDesc::none()
              : zp == 2 ? TensorDesc(DType::u8, {N, (K / group + 1) / 2})
                        : TensorDesc(bits == 4 ? DType::u8 : DType::i8, {N, K / group}),
              bias ? TensorDesc(t, {N}) : TensorDesc::none()};
  c.attrs = {{"bits", int64_t{bits}}, {"group", int64_t{group}}};
  c.ranges = {real(-1, 1), bits == 4 ? ints(0, 255) : ints(-128, 127), real(0.005, 0.02),
              zp == 2     ? ints(0, 255)
              : bits == 4 ? ints(0, 15)
                          : ints(-8, 8),
              real(-1, 1)};
  c.tol_scale = std::max(1.0, std::sqrt(static_cast<double>(K)) / 4);
  return c;
}

// One matmul_wq instance: the shape, attributes and path thresholds
// resolved once; a constant zero point in
// the packed int4 form is unpacked here rather than per call.
class WqKernel : public KernelInstance {
 public:
  WqKernel(const OpCall& call, quant::WqFn fn, Isa isa)
      : fn_(fn),
        sh_(wq_shape(call)),
        zp_packed_(zp_packed(call)),
        has_zp_(call.has_input(3)),
        has_bias_(call.has_input(4)) {
    args_.M = sh_.M;
    args_.N = sh_.N;
    args_.K = sh_.K;
    args_.bits = sh_.bits;
    args_.group = sh_.group;
    args_.xt = call.in(0).dtype;
    args_.yt = call.out(0).dtype;
    args_.isa = isa;
    args_.paths = paths_of(call);
    args_.threads = num_threads();
    if (zp_packed_)
      if (const Tensor* zp = call.constant(3)) {
        zp_const_ = Tensor::empty({static_cast<int64_t>(zp_unpacked_bytes(sh_))}, DType::u8);
        unpack_zp(zp->data_as<uint8_t>(), zp_const_.data_as<uint8_t>());
      }
    ws_ = quant::wq_workspace_bytes(args_.paths, sh_.M, sh_.N, sh_.K, sh_.group, isa, args_.xt,
                                    args_.yt, args_.threads) +
          (zp_packed_ && !zp_const_.data() ? zp_unpacked_bytes(sh_) : 0);
  }
  size_t workspace_bytes() const override { return ws_; }
  void run(const Tensor* in, Tensor* out, void* ws) override {
    quant::WqArgs a = args_;
    a.x = in[0].data();
    a.w = static_cast<const uint8_t*>(in[1].data());
    a.scales = in[2].data_as<float>();
    a.zp = has_zp_ ? in[3].data() : nullptr;
    if (zp_const_.data()) {
      a.zp = zp_const_.data();
    } else if (zp_packed_ && sh_.N > 0) {
      // Unpacked to one per byte at the front of the workspace (N x G
      // bytes, 1/64 of the int4 weights' bytes at group 128).
      uint8_t* zu = static_cast<uint8_t*>(ws);
      unpack_zp(static_cast<const uint8_t*>(a.zp), zu);
      a.zp = zu;
      ws = zu + zp_unpacked_bytes(sh_);
    }
    if (has_bias_) {
      a.bt = in[4].dtype();
      a.bias = in[4].data();
    }
    a.y = out[0].data();
    a.ws = ws;
    if (a.M == 0 || a.N == 0) return;
    fn_(a);
  }

 private:
  void unpack_zp(const uint8_t* zs, uint8_t* zu) const {
    const int64_t G = sh_.G, gb = (G + 1) / 2;
    for (int64_t n = 0; n < sh_.N; ++n)
      for (int64_t g = 0; g < G; ++g) {
        const uint8_t b = zs[n * gb + g / 2];
        zu[n * G + g] = static_cast<uint8_t>(g % 2 == 0 ? b & 15 : b >> 4);
      }
  }

  quant::WqFn fn_;
  WqShape sh_;
  bool zp_packed_, has_zp_, has_bias_;
  quant::WqArgs args_;
  Tensor zp_const_;  // a constant packed zero point, unpacked at create
  size_t ws_ = 0;
};

}  // namespace

void register_matmul_wq_op(Registry& r) {
  OpSchema s;
  s.name = "matmul_wq";
  s.family = "quant";
  s.doc =
      "weight-only quantized linear: y = x @ W^T + bias, W[n,k] = (q[n,k] - zp[n,k/group]) * "
      "scale[n,k/group]; bits 8: q int8 [N,K] (zp default 0); bits 4: q two unsigned nibbles per "
      "byte [N,K/2], k even in the low nibble (zp u8 0..15, default 8)";
  s.inputs = {{"x", "f32, bf16 or f16 [..., K]"},
              {.name = "w", .doc = "bits 4: u8 [N, K/2]; bits 8: i8 [N, K]", .weight = true},
              {.name = "scales", .doc = "f32 [N, K/group]", .weight = true},
              {.name = "zero_point",
               .doc = "bits 4: u8 [N, K/group] (0..15), or packed two per byte u8 [N, ceil(K/group "
                      "/ 2)] (even group in the low nibble, as ONNX MatMulNBits); bits 8: i8 [N, "
                      "K/group]",
               .optional = true,
               .weight = true},
              {"bias", "[N], dtype of x or f32", true}};
  s.outputs = {{"y", "[..., N], dtype of x"}};
  s.attrs = {{"bits", AttrType::i64, int64_t{4}, "4 or 8"},
             {"group", AttrType::i64, int64_t{128}, "32, 64 or 128 (K % group == 0)"},
             {"panel_min_m", AttrType::i64, quant::WqPaths{}.panel_min_m,
              "tuning: rows of x (M) from which the panel path runs instead of the tiled kernel"},
             {"panel_cols", AttrType::i64, quant::WqPaths{}.panel_cols,
              "tuning: weight rows per panel task, 0 = automatic (256 for M < 512, else 512)"}};
  s.dtypes = {DType::f32, DType::bf16, DType::f16};
  s.infer = [](const OpCall& call) {
    infer_checks(call);
    Shape ys = call.in(0).shape;
    ys.back() = call.in(1).shape[0];
    return std::vector<TensorDesc>{TensorDesc(call.in(0).dtype, ys)};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in,
                   std::vector<RefTensor>& out) {
    const WqShape sh = wq_shape(call);
    const bool zp = call.has_input(3), bias = call.has_input(4), packed = zp_packed(call);
    std::vector<double> w(static_cast<size_t>(sh.K));
    for (int64_t n = 0; n < sh.N; ++n) {
      for (int64_t k = 0; k < sh.K; ++k) {
        const int64_t g = k / sh.group;
        double q;
        if (sh.bits == 4) {
          const int64_t b =
              static_cast<int64_t>(in[1].data[static_cast<size_t>(n * sh.K / 2 + k / 2)]);
          q = static_cast<double>(k % 2 == 0 ? (b & 15) : (b >> 4));
        } else {
          q = in[1].data[static_cast<size_t>(n * sh.K + k)];
        }
        double z = sh.bits == 4 ? 8 : 0;
        if (packed) {
          const int64_t b =
              static_cast<int64_t>(in[3].data[static_cast<size_t>(n * ((sh.G + 1) / 2) + g / 2)]);
          z = static_cast<double>(g % 2 == 0 ? (b & 15) : (b >> 4));
        } else if (zp) {
          z = in[3].data[static_cast<size_t>(n * sh.G + g)];
        }
        w[static_cast<size_t>(k)] = (q - z) * in[2].data[static_cast<size_t>(n * sh.G + g)];
      }
      for (int64_t m = 0; m < sh.M; ++m) {
        double acc = bias ? in[4].data[static_cast<size_t>(n)] : 0.0;
        for (int64_t k = 0; k < sh.K; ++k)
          acc += in[0].data[static_cast<size_t>(m * sh.K + k)] * w[static_cast<size_t>(k)];
        out[0].data[static_cast<size_t>(m * sh.N + n)] = acc;
      }
    }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    struct C {
      Shape x;
      int64_t N;
      int group;
      int zp;  // 0 none, 1 one per byte, 2 packed two per byte (bits 4; bits 8: one per byte)
      bool bias;
    };
    const C list[] = {
        {{1, 32}, 1, 32, false, false},
        {{1, 128}, 17, 32, false, true},
        {{1, 256}, 64, 128, true, false},
        {{2, 64}, 5, 64, false, false},
        {{3, 128}, 33, 32, true, true},
        {{4, 256}, 9, 64, false, true},
        {{5, 128}, 7, 128, true, false},
        {{7, 64}, 65, 32, false, false},
        {{16, 128}, 16, 128, false, true},
        {{17, 96}, 3, 32, true, false},
        {{33, 192}, 20, 64, false, false},
        {{2, 3, 64}, 11, 64, true, true},
        {{1, 1024}, 40, 128, true, true},
        {{0, 64}, 4, 32, false, false},
        // M >= panel_min_m (24): the panel path (weights dequantized into the
        // engine's packed-B layout per task of 256 rows, 512 from M = 512);
        // odd M, N not a multiple of 16 or of the task width, several tasks,
        // a batch dim.
        {{512, 64}, 1030, 32, true, true},
        {{2, 300, 128}, 33, 128, false, false},
        {{24, 64}, 16, 32, false, false},
        {{32, 64}, 16, 32, false, false},
        {{33, 128}, 47, 32, true, true},
        {{47, 256}, 300, 64, true, false},
        {{64, 128}, 513, 128, false, true},
        {{100, 192}, 37, 64, false, false},
        {{129, 384}, 260, 128, true, true},
        {{3, 85, 128}, 70, 32, false, true},
        {{255, 64}, 257, 32, true, false},
        {{511, 128}, 19, 128, false, true},
        // Zero points packed two per byte (bits 4): odd and even group
        // counts, G = 1, the tiled and the panel path.
        {{1, 96}, 9, 32, 2, false},
        {{3, 256}, 17, 64, 2, true},
        {{1, 32}, 5, 32, 2, false},
        {{5, 640}, 33, 128, 2, false},
        {{40, 160}, 70, 32, 2, true},
        {{2, 30, 256}, 300, 64, 2, false},
    };
    for (int bits : {4, 8})
      for (const C& c : list) {
        const int zp = bits == 8 && c.zp == 2 ? 1 : c.zp;
        cs.push_back(make_case("b" + std::to_string(bits) + "_g" + std::to_string(c.group) + "_x" +
                                   shape_str(c.x) + "_n" + std::to_string(c.N) +
                                   (zp == 1   ? "_zp"
                                    : zp == 2 ? "_zp2"
                                              : "") +
                                   (c.bias ? "_bias" : ""),
                               t, c.x, c.N, bits, c.group, zp, c.bias));
        // The panel path (M >= panel_min_m) dequantizes each weight
        // to f32 and accumulate w * x over all of K in one f32 FMA chain per
        // output (the engine's order), like an f32 matmul. The matmul's
        // tolerance grows as sqrt(K) for operands in [-1, 1]; int8 weights
        // here reach |q - zp| * scale = 135 * 0.02 = 2.7, so the partial sums,
        // and their rounding, are up to ~3x larger than that model while the
        // outputs can cancel to near zero (measured: 2.5e-5 abs on a 0.084
        // output at K = 384, 1.7e-5 on 0.025 at K = 128). int4 weights stay
        // below 0.3.
        int64_t m = 1;
        for (size_t i = 0; i + 1 < c.x.size(); ++i) m *= c.x[i];
        if (m >= quant::WqPaths{}.panel_min_m)  // the path the case's op runs
          cs.back().tol_scale =
              std::max(cs.back().tol_scale,
                       bits == 8 ? 3.0 * std::sqrt(static_cast<double>(c.x.back())) : 4.0);
      }
    return cs;
  };
  s.tolerance = default_tolerance;
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    // zp=0 none, 1 one per byte, 2 (bits 4) packed two per byte
    ops::CaseKeys keys("matmul_wq", kv);
    const int64_t M = keys.i("m", 1), N = keys.i("n", 4096), K = keys.i("k", 4096);
    const int bits = static_cast<int>(keys.i("bits", 4)),
              group = static_cast<int>(keys.i("group", 128));
    const int zp = static_cast<int>(keys.i("zp", 0));
    const bool bias = keys.i("bias", 0) != 0;
    keys.done();
    return make_case("bench", t, {M, K}, N, bits, group, zp, bias);
  };
  s.cost = [](const OpCall& call, double* bytes, double* flops) {
    const WqShape sh = wq_shape(call);
    double b = 0;
    for (size_t i = 0; i < call.inputs.size(); ++i)
      if (call.has_input(i))
        b += static_cast<double>(call.in(i).numel()) *
             static_cast<double>(dtype_size(call.in(i).dtype));
    b += static_cast<double>(call.out(0).numel()) *
         static_cast<double>(dtype_size(call.out(0).dtype));
    *bytes = b;
    *flops =
        2.0 * static_cast<double>(sh.M) * static_cast<double>(sh.N) * static_cast<double>(sh.K);
  };
  r.add_op(std::move(s));

  int priority = 30;
  for (Isa isa : {Isa::avx512, Isa::avx2, Isa::scalar}) {
    KernelDesc k;
    k.name = std::string("matmul_wq_") + isa_name(isa);
    k.isa = isa;
    k.dtypes = {DType::f32, DType::bf16, DType::f16};
    k.priority = priority -= 10;
    const quant::WqFn fn = isa == Isa::avx512 ? quant::fns_avx512().wq
                           : isa == Isa::avx2 ? quant::fns_avx2().wq
                                              : quant::fns_scalar().wq;
    k.create = [fn, isa](const OpCall& call, std::string*) -> std::unique_ptr<KernelInstance> {
      return std::make_unique<WqKernel>(call, fn, isa);
    };
    r.add_kernel("matmul_wq", std::move(k));
  }
}

}  // namespace opsnn

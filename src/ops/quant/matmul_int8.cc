// matmul_int8 (W8A8): int8/uint8 activations x int8 weights -> int32, with a
// fused dequantize (f32/bf16/f16) or requantize (i8/u8) epilogue, on the int8 GEMM
// in src/kernels/qgemm/ (AVX512-VNNI, AVX-VNNI, plain AVX2, scalar).
//
//   acc[m, n] = sum_k (a[m, k] - a_zp) * w[n, k]                 output i32 (exact)
//   v = ((float)acc * a_scale[m]) * w_scale[n] (+ bias[n]), act  output f32 / bf16 / f16
//   y = saturate(round_half_even(v / y_scale) + y_zp)            output i8 / u8 (act none|relu)
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/act/act.h"
#include "kernels/qgemm/qgemm.h"
#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/checks.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"
#include "opsnn/op.h"
#include "opsnn/quant.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

enum In { kA = 0, kW, kAScale, kWScale, kBias, kAZp, kYScale, kYZp };

// A scalar zero point of dtype i8 or u8 (the schema checks which).
int32_t zero_point_of(const Tensor& z) {
  return z.dtype() == DType::u8 ? z.data_as<uint8_t>()[0] : z.data_as<int8_t>()[0];
}

qgemm::Out out_of(const OpCall& call) {
  const std::string& o = call.attrs.s("output");
  if (o == "i32") return qgemm::Out::i32;
  if (o == "f32") return qgemm::Out::f32;
  if (o == "bf16") return qgemm::Out::bf16;
  if (o == "f16") return qgemm::Out::f16;
  if (o == "i8") return qgemm::Out::i8;
  if (o == "u8") return qgemm::Out::u8;
  call.fail("attribute 'output'", "i32|f32|bf16|f16|i8|u8", "'" + o + "'");
}

qgemm::Act act_of(const OpCall& call) {
  return act::from_name(call.op(), call.attrs.s("activation"));
}

DType out_dtype(qgemm::Out o) {
  switch (o) {
    case qgemm::Out::i32:
      return DType::i32;
    case qgemm::Out::f32:
      return DType::f32;
    case qgemm::Out::bf16:
      return DType::bf16;
    case qgemm::Out::f16:
      return DType::f16;
    case qgemm::Out::i8:
      return DType::i8;
    case qgemm::Out::u8:
      return DType::u8;
  }
  return DType::i32;
}

bool is_scalar_shape(const TensorDesc& d) { return d.numel() == 1 && d.rank() <= 1; }

struct Dims {
  int64_t M = 0, N = 0, K = 0;
};
Dims dims_of(const OpCall& call) {
  Dims d;
  d.K = call.in(kA).shape.back();
  d.N = call.in(kW).shape[0];
  d.M = 1;
  for (size_t i = 0; i + 1 < call.in(kA).shape.size(); ++i) d.M *= call.in(kA).shape[i];
  return d;
}

std::vector<TensorDesc> infer(const OpCall& call) {
  ops::require_dtype(call, kA, {DType::i8, DType::u8});
  ops::require_rank_at_least(call, kA, 1);
  ops::require_dtype(call, kW, {DType::i8});
  ops::require_rank(call, kW, 2);
  const Dims d = dims_of(call);
  if (call.in(kW).shape[1] != d.K)
    call.fail(ops::input_name(call, kW), "[N, " + std::to_string(d.K) + "] (K = last dim of a)",
              shape_str(call.in(kW).shape));
  if (d.K > 65536)
    call.fail(ops::input_name(call, kA), "K <= 65536 (int32 accumulation stays exact)",
              std::to_string(d.K));
  const qgemm::Out out = out_of(call);
  const qgemm::Act act = act_of(call);
  Shape rows = call.in(kA).shape;
  rows.back() = 1;
  const bool need_scales = out != qgemm::Out::i32;
  for (int i : {kAScale, kWScale}) {
    if (!call.has_input(static_cast<size_t>(i))) {
      if (need_scales)
        call.fail(ops::input_name(call, static_cast<size_t>(i)),
                  "present for output " + call.attrs.s("output"), "absent");
      continue;
    }
    ops::require_dtype(call, static_cast<size_t>(i), {DType::f32});
  }
  if (call.has_input(kAScale) && !is_scalar_shape(call.in(kAScale)) &&
      call.in(kAScale).shape != rows)
    call.fail(ops::input_name(call, kAScale),
              "[] or [1] (per tensor) or " + shape_str(rows) + " (per token)",
              shape_str(call.in(kAScale).shape));
  if (call.has_input(kWScale) && !is_scalar_shape(call.in(kWScale)) &&
      call.in(kWScale).shape != Shape{d.N})
    call.fail(ops::input_name(call, kWScale), "[] or [1] or [" + std::to_string(d.N) + "]",
              shape_str(call.in(kWScale).shape));
  if (call.has_input(kBias)) {
    if (!need_scales) call.fail(ops::input_name(call, kBias), "absent for output i32", "present");
    ops::require_dtype(call, kBias, {DType::f32});
    ops::require_shape(call, kBias, {d.N});
  }
  if (call.has_input(kAZp)) {
    ops::require_same_dtype(call, kAZp, kA);
    if (!is_scalar_shape(call.in(kAZp)))
      call.fail(ops::input_name(call, kAZp), "[] or [1]", shape_str(call.in(kAZp).shape));
  }
  const bool requant = out == qgemm::Out::i8 || out == qgemm::Out::u8;
  if (requant) {
    if (!call.has_input(kYScale))
      call.fail(ops::input_name(call, kYScale), "present for output " + call.attrs.s("output"),
                "absent");
    ops::require_dtype(call, kYScale, {DType::f32});
    if (!is_scalar_shape(call.in(kYScale)))
      call.fail(ops::input_name(call, kYScale), "[] or [1]", shape_str(call.in(kYScale).shape));
    if (call.has_input(kYZp)) {
      ops::require_dtype(call, kYZp, {out_dtype(out)});
      if (!is_scalar_shape(call.in(kYZp)))
        call.fail(ops::input_name(call, kYZp), "[] or [1]", shape_str(call.in(kYZp).shape));
    }
    if (act != qgemm::Act::none && act != qgemm::Act::relu)
      call.fail("attribute 'activation'", "none|relu for a requantized output",
                "'" + call.attrs.s("activation") + "'");
  } else if (call.has_input(kYScale) || call.has_input(kYZp)) {
    call.fail(ops::input_name(call, kYScale), "absent unless output is i8|u8", "present");
  }
  if (out == qgemm::Out::i32 && act != qgemm::Act::none)
    call.fail("attribute 'activation'", "none for output i32",
              "'" + call.attrs.s("activation") + "'");
  Shape ys = call.in(kA).shape;
  ys.back() = d.N;
  return {TensorDesc(out_dtype(out), ys)};
}

void reference(const OpCall& call, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
  const Dims d = dims_of(call);
  const qgemm::Out o = out_of(call);
  const qgemm::Act act = act_of(call);
  const double za = call.has_input(kAZp) ? in[kAZp].data[0] : 0.0;
  for (int64_t m = 0; m < d.M; ++m)
    for (int64_t n = 0; n < d.N; ++n) {
      int64_t acc = 0;  // exact integer sum
      for (int64_t k = 0; k < d.K; ++k)
        acc += static_cast<int64_t>(in[kA].data[static_cast<size_t>(m * d.K + k)] - za) *
               static_cast<int64_t>(in[kW].data[static_cast<size_t>(n * d.K + k)]);
      double& y = out[0].data[static_cast<size_t>(m * d.N + n)];
      if (o == qgemm::Out::i32) {
        y = static_cast<double>(acc);
        continue;
      }
      const RefTensor& as = in[kAScale];
      const RefTensor& ws = in[kWScale];
      const float fa =
          static_cast<float>(as.data.size() == 1 ? as.data[0] : as.data[static_cast<size_t>(m)]);
      const float fw =
          static_cast<float>(ws.data.size() == 1 ? ws.data[0] : ws.data[static_cast<size_t>(n)]);
      if (o == qgemm::Out::f32 || o == qgemm::Out::bf16 || o == qgemm::Out::f16) {
        double v = static_cast<double>(acc) * fa * fw;
        if (call.has_input(kBias)) v += in[kBias].data[static_cast<size_t>(n)];
        y = act::reference(act, v);
        continue;
      }
      // Requantize: emulate the kernel's f32 operations exactly.
      float f = static_cast<float>(acc) * fa;
      f = call.has_input(kBias)
              ? std::fma(f, fw, static_cast<float>(in[kBias].data[static_cast<size_t>(n)]))
              : f * fw;
      if (act == qgemm::Act::relu) f = f > 0 ? f : 0.0f;
      const bool u8 = o == qgemm::Out::u8;
      const double lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
      const float r = f / static_cast<float>(in[kYScale].data[0]);
      double q =
          std::nearbyint(static_cast<double>(r)) + (call.has_input(kYZp) ? in[kYZp].data[0] : 0.0);
      if (std::isnan(q)) q = lo;
      y = std::min(std::max(q, lo), hi);
    }
}

ValueRange real(double lo, double hi) { return {lo, hi, false}; }
ValueRange ints(double lo, double hi) { return {lo, hi, true}; }

struct CaseSpec {
  Shape a;
  int64_t N;
  DType at = DType::i8;
  std::string output = "f32";
  bool per_token = true, per_channel = true, bias = false, azp = false, yzp = false;
  bool w7 = false;  // weights in [-64, 64] (the 7-bit AVX2 kernel's range)
  std::string act = "none";
};

CheckCase make_case(const CaseSpec& s) {
  const int64_t K = s.a.back();
  Shape rows = s.a;
  rows.back() = 1;
  const bool requant = s.output == "i8" || s.output == "u8";
  const bool scales = s.output != "i32";
  CheckCase c;
  c.name = std::string(dtype_name(s.at)) + "_" + s.output + shape_str(s.a) + "_n" +
           std::to_string(s.N) + (s.per_token ? "_tok" : "_tens") + (s.per_channel ? "_ch" : "") +
           (s.bias ? "_bias" : "") + (s.azp ? "_azp" : "") + (s.yzp ? "_yzp" : "") +
           (s.w7 ? "_w7" : "") + (s.act != "none" ? "_" + s.act : "");
  c.keep_dtypes = true;
  const TensorDesc none = TensorDesc::none();
  c.inputs = {TensorDesc(s.at, s.a),
              TensorDesc(DType::i8, {s.N, K}),
              scales ? TensorDesc(DType::f32, s.per_token ? rows : Shape{}) : none,
              scales ? TensorDesc(DType::f32, s.per_channel ? Shape{s.N} : Shape{1}) : none,
              s.bias ? TensorDesc(DType::f32, {s.N}) : none,
              s.azp ? TensorDesc(s.at, {}) : none,
              requant ? TensorDesc(DType::f32, {}) : none,
              requant && s.yzp ? TensorDesc(s.output == "u8" ? DType::u8 : DType::i8, {}) : none};
  c.attrs = {{"output", s.output}, {"activation", s.act}};
  // Scales sized so that requantized outputs span the range and saturate sometimes.
  const double sc = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(K, 1)));
  c.ranges = {s.at == DType::u8 ? ints(0, 255) : ints(-128, 127),
              s.w7 ? ints(-64, 64) : ints(-128, 127),
              real(0.5 * sc * 0.01, sc * 0.01),
              real(0.005, 0.01),
              real(-1, 1),
              s.at == DType::u8 ? ints(100, 150) : ints(-10, 10),
              real(0.004, 0.008),
              s.output == "u8" ? ints(100, 150) : ints(-20, 20)};
  c.tol_scale = 2;
  return c;
}

}  // namespace

void register_matmul_int8_op(Registry& r) {
  OpSchema s;
  s.name = "matmul_int8";
  s.family = "quant";
  s.doc =
      "W8A8 linear: acc = sum_k (a - a_zero_point) * w[n, k] in exact int32; output i32 = acc, "
      "f32/bf16/f16 = act(acc * a_scale * w_scale + bias), i8/u8 = saturate(round(that / y_scale) "
      "+ y_zero_point)";
  s.inputs = {{"a", "i8 or u8 [..., K]"},
              {.name = "w", .doc = "i8 [N, K]", .weight = true},
              {"a_scale", "f32 [] (per tensor) or [..., 1] (per token)", true},
              {"w_scale", "f32 [] or [N] (per channel)", true},
              {"bias", "f32 [N]", true},
              {"a_zero_point", "dtype of a, []", true},
              {"y_scale", "f32 [] (outputs i8/u8)", true},
              {"y_zero_point", "dtype of y, [] (outputs i8/u8)", true}};
  s.outputs = {{"y", "[..., N]: i32, f32, bf16, f16, i8 or u8 (attribute output)"}};
  s.attrs = {{"output", AttrType::str, std::string("f32"), "i32|f32|bf16|f16|i8|u8"},
             {"activation", AttrType::str, std::string("none"),
              "none|relu|gelu|gelu_tanh|silu (i8/u8: none|relu)"}};
  s.dtypes = {DType::f32, DType::bf16, DType::f16};
  s.infer = infer;
  s.reference = reference;
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    if (t == DType::bf16 || t == DType::f16) {
      const char* out = t == DType::bf16 ? "bf16" : "f16";
      for (const char* act : {"none", "gelu"}) {
        CaseSpec c{{17, 65}, 33};
        c.output = out;
        c.bias = true;
        c.act = act;
        cs.push_back(make_case(c));
      }
      CaseSpec c{{64, 255}, 100, DType::u8};
      c.output = out;
      c.azp = true;
      cs.push_back(make_case(c));
      CaseSpec w{{13, 1030}, 70};  // K >= 1024: the wide AVX-512 kernel
      w.output = out;
      w.bias = true;
      cs.push_back(make_case(w));
      return cs;
    }
    const int64_t sizes[][3] = {{1, 1, 1},      {1, 7, 15},     {7, 15, 17},
                                {15, 16, 63},   {16, 17, 64},   {17, 63, 65},
                                {63, 64, 1},    {64, 65, 255},  {65, 1, 16},
                                {13, 100, 7},   {255, 31, 40},  {100, 255, 64},
                                {1000, 17, 33}, {3, 1000, 65},  {1, 256, 1000},
                                {20, 70, 1100}, {7, 129, 2051}, {97, 300, 1101},
                                {3, 40, 4100},  {50, 530, 4100}};  // K blocked over several tasks
    for (const auto& z : sizes) {
      CaseSpec c{{z[0], z[2]}, z[1]};
      c.output = "i32";
      c.per_token = c.per_channel = false;
      cs.push_back(make_case(c));
    }
    for (const auto& z : {sizes[2], sizes[7], sizes[11]}) {
      CaseSpec c{{z[0], z[2]}, z[1], DType::u8};
      c.output = "i32";
      c.azp = true;
      cs.push_back(make_case(c));
    }
    {
      CaseSpec c{{2, 3, 40}, 20, DType::i8};
      c.output = "i32";
      cs.push_back(make_case(c));
    }
    // 7-bit weights: K tails, several K blocks, u8 with a zero point.
    for (const auto& z : {sizes[2], sizes[7], sizes[16], sizes[18]}) {
      CaseSpec c{{z[0], z[2]}, z[1]};
      c.output = "i32";
      c.w7 = true;
      cs.push_back(make_case(c));
    }
    {
      CaseSpec c{{64, 255}, 100, DType::u8};
      c.output = "i32";
      c.azp = c.w7 = true;
      cs.push_back(make_case(c));
      CaseSpec d{{33, 70}, 45};
      d.bias = d.w7 = true;
      d.act = "silu";
      cs.push_back(make_case(d));
    }
    // dequantizing epilogues
    for (const char* act : {"none", "relu", "gelu", "gelu_tanh", "silu"}) {
      CaseSpec c{{33, 70}, 45};
      c.bias = true;
      c.act = act;
      cs.push_back(make_case(c));
    }
    {
      CaseSpec c{{20, 255}, 31};
      c.per_token = false;
      c.per_channel = false;
      cs.push_back(make_case(c));
      CaseSpec u{{65, 64}, 17, DType::u8};
      u.azp = true;
      u.bias = true;
      cs.push_back(make_case(u));
    }
    // requantizing epilogues
    {  // K >= 1024 (the wide AVX-512 kernel): dequantized and requantized epilogues
      CaseSpec f{{9, 1100}, 70};
      f.bias = true;
      f.act = "gelu";
      cs.push_back(make_case(f));
      CaseSpec q{{9, 1100}, 70, DType::u8};
      q.output = "u8";
      q.azp = q.yzp = q.bias = true;
      cs.push_back(make_case(q));
    }
    for (const char* o : {"i8", "u8"}) {
      CaseSpec c{{40, 130}, 50};
      c.output = o;
      cs.push_back(make_case(c));
      c.bias = true;
      c.yzp = true;
      cs.push_back(make_case(c));
      c.act = "relu";
      c.at = DType::u8;
      c.azp = true;
      cs.push_back(make_case(c));
    }
    return cs;
  };
  s.tolerance = default_tolerance;
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType) {
    ops::CaseKeys keys("matmul_int8", kv);
    CaseSpec c{{keys.i("m", 512), keys.i("k", 4096)}, keys.i("n", 4096)};
    c.output = keys.s("output", c.output);
    const std::string a = keys.s("a", "s8");
    if (a != "s8" && a != "u8") throw Error("matmul_int8", "case key 'a'", "s8|u8", "'" + a + "'");
    if (a == "u8") c.at = DType::u8;
    keys.done();
    return make_case(c);
  };
  s.cost = [](const OpCall& call, double* bytes, double* flops) {
    const Dims d = dims_of(call);
    *flops = 2.0 * static_cast<double>(d.M) * static_cast<double>(d.N) * static_cast<double>(d.K);
    *bytes = static_cast<double>(d.M * d.K + d.N * d.K) +
             static_cast<double>(call.out(0).numel() *
                                 static_cast<int64_t>(dtype_size(call.out(0).dtype)));
  };
  s.bench_packed = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Attrs& attrs) {
    auto ws = bench_packed_copies([&] { return pack_int8_matrix(in[kW]); });
    // The op's optional inputs as the packed API's parameters (the tensors
    // are kept alive by the closure).
    auto keep = std::make_shared<std::vector<Tensor>>(in);
    auto opt = [keep](size_t i) -> const Tensor* {
      return i < keep->size() && (*keep)[i].defined() ? &(*keep)[i] : nullptr;
    };
    Int8MatmulParams p;
    p.a_scale = opt(kAScale);
    p.w_scale = opt(kWScale);
    p.bias = opt(kBias);
    if (const Tensor* z = opt(kAZp)) p.a_zero_point = zero_point_of(*z);
    if (const Tensor* z = opt(kYZp)) p.y_zero_point = zero_point_of(*z);
    if (attrs.has("activation")) p.activation = attrs.s("activation");
    if (const Tensor* ys = opt(kYScale)) p.y_scale = ys->data_as<float>()[0];
    PackedBench pb;
    pb.kernel = "matmul_int8_packed(" + ws->front().kernel() + ")";
    pb.run = [ws, keep, p, y = out[0], next = size_t{0}]() mutable {
      matmul_int8_packed((*keep)[kA], (*ws)[next++ % ws->size()], y, p);
    };
    return pb;
  };
  r.add_op(std::move(s));

  struct K {
    Isa isa;
    const qgemm::KernelFns* fns;
    std::function<bool()> cpu_ok;
  };
  const K kernels[] = {
      {Isa::avx512, &qgemm::fns_avx512vnni_wide(), [] { return has_avx512_vnni(); }},
      {Isa::avx512, &qgemm::fns_avx512vnni(), [] { return has_avx512_vnni(); }},
      {Isa::avx2, &qgemm::fns_avxvnni(), [] { return has_avx_vnni(); }},
      {Isa::avx2, &qgemm::fns_avx2(), nullptr},
      {Isa::scalar, &qgemm::fns_scalar(), nullptr}};
  int priority = 50;
  for (const K& k : kernels) {
    struct Instance : KernelInstance {
      // Plain AVX2 runs its 7-bit form where the weights fit [-64, 64]
      // (qgemm::for_weights): a constant W is checked once here, a W given
      // per call on every call (both forms share the packing).
      const qgemm::KernelFns* fns;
      Dims d;
      size_t pack_bytes = 0, ws = 0;
      int threads = 1;
      qgemm::Out out;
      qgemm::Act act;
      std::shared_ptr<void> packed_w;  // a constant W, packed once at create
      size_t workspace_bytes() const override { return (packed_w ? 0 : pack_bytes) + ws + 128; }
      const OpCall* call;
      void run(const Tensor* in, Tensor* y, void* work) override {
        uint8_t* base =
            reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(work) + 63) & ~uintptr_t{63});
        // A W that is not a constant operand is packed on every call (as
        // pack_int8_matrix would, into the workspace).
        const void* pw = packed_w.get();
        const qgemm::KernelFns* f = fns;
        if (!pw) {
          const int8_t* w = in[kW].data_as<int8_t>();
          qgemm::pack_w(fns->nr, d.N, d.K, w, d.K, base);
          pw = base;
          base += pack_bytes;
          f = &qgemm::for_weights(*fns, w, d.N, d.K, d.K);
        }
        qgemm::Args a;
        a.M = d.M;
        a.N = d.N;
        a.K = d.K;
        a.a = in[kA].data();
        a.lda = d.K;
        a.a_signed = in[kA].dtype() == DType::i8;
        if (call->has_input(kAZp)) a.a_zp = zero_point_of(in[kAZp]);
        a.packed_w = pw;
        a.y = y[0].data();
        a.ldy = d.N;
        a.ep.out = out;
        a.ep.act = act;
        if (call->has_input(kAScale)) {
          a.ep.a_scale = in[kAScale].data_as<float>();
          a.ep.a_scale_rs = in[kAScale].numel() == 1 ? 0 : 1;
        }
        if (call->has_input(kWScale)) {
          a.ep.w_scale = in[kWScale].data_as<float>();
          a.ep.w_scale_cs = in[kWScale].numel() == 1 && d.N != 1 ? 0 : 1;
        }
        if (call->has_input(kBias)) a.ep.bias = in[kBias].data_as<float>();
        if (call->has_input(kYScale)) a.ep.y_scale = in[kYScale].data_as<float>()[0];
        if (call->has_input(kYZp)) a.ep.y_zp = zero_point_of(in[kYZp]);
        a.ws = base;
        a.threads = threads;
        f->run(a);
      }
    };
    KernelDesc desc;
    desc.name = std::string("matmul_int8_") + k.fns->name;
    desc.isa = k.isa;
    desc.cpu_ok = k.cpu_ok;
    desc.dtypes = {DType::f32, DType::bf16, DType::f16};
    desc.priority = priority -= 10;
    desc.create = [fns = k.fns](const OpCall& call,
                                std::string* why) -> std::unique_ptr<KernelInstance> {
      if (fns == &qgemm::fns_avx512vnni_wide() && dims_of(call).K < qgemm::kWideMinK) {
        if (why) *why = "K < " + std::to_string(qgemm::kWideMinK) + " (the 12x32 kernel is faster)";
        return nullptr;
      }
      const Tensor* cw = call.constant(kW);  // contiguous [N, K]
      auto inst = std::make_unique<Instance>();
      inst->fns =
          cw ? &qgemm::for_weights(*fns, cw->data_as<int8_t>(), cw->dim(0), cw->dim(1), cw->dim(1))
             : fns;
      inst->call = &call;
      inst->d = dims_of(call);
      inst->out = out_of(call);
      inst->act = act_of(call);
      inst->pack_bytes = (qgemm::packed_bytes(fns->nr, inst->d.N, inst->d.K) + 63) & ~size_t{63};
      inst->threads = num_threads();
      inst->ws = qgemm::workspace_bytes(*inst->fns, inst->d.M, inst->d.N, inst->d.K, inst->threads);
      if (!cw && fns == &qgemm::fns_avx2())  // either form, chosen per call
        inst->ws = std::max(inst->ws, qgemm::workspace_bytes(qgemm::fns_avx2_w7(), inst->d.M,
                                                             inst->d.N, inst->d.K, inst->threads));
      if (const Tensor* w = cw) {
        inst->packed_w.reset(aligned_alloc_bytes(std::max<size_t>(inst->pack_bytes, 64)),
                             aligned_free);
        qgemm::pack_w(fns->nr, inst->d.N, inst->d.K, w->data_as<int8_t>(), inst->d.K,
                      inst->packed_w.get());
      }
      return inst;
    };
    r.add_kernel("matmul_int8", std::move(desc));
  }
}

}  // namespace opsnn

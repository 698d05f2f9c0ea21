// The quantization family beyond the case tables: rounding rules, signedness
// handling of the int8 GEMM, the pre-packed API against the op, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

Tensor bytes_tensor(const Shape& s, DType t, uint32_t seed) {
  Tensor x = Tensor::empty(s, t);
  uint8_t* p = static_cast<uint8_t*>(x.data());
  for (int64_t i = 0; i < x.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = static_cast<uint8_t>(seed >> 24);
  }
  return x;
}

Tensor floats(const Shape& s, float lo, float hi, uint32_t seed) {
  Tensor x = Tensor::empty(s, DType::f32);
  for (int64_t i = 0; i < x.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    x.data_as<float>()[i] = lo + (hi - lo) * static_cast<float>(seed >> 8) / 16777216.0f;
  }
  return x;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST(Quantize, RoundHalfToEvenAndSaturate) {
  Tensor x = Tensor::from<float>({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 300.0f, -300.0f}, {8});
  Tensor s = Tensor::from<float>({1.0f}, {1});
  auto y = call("quantize", {x, s});
  const int8_t expect[] = {0, 2, 2, 0, -2, -2, 127, -128};
  ASSERT_EQ(y[0].dtype(), DType::i8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[0].data_as<int8_t>()[i], expect[i]) << i;
  Tensor zp = Tensor::from<uint8_t>({10}, {1});
  auto u = call("quantize", {x, s, zp});
  const uint8_t expect_u[] = {10, 12, 12, 10, 8, 8, 255, 0};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(u[0].data_as<uint8_t>()[i], expect_u[i]) << i;
}

TEST(Quantize, RoundTripWithinHalfAStep) {
  Tensor x = floats({7, 33}, -2, 2, 3);
  auto q = call("quantize_dynamic", {x});
  auto d = call("dequantize", {q[0], q[1].reshape({7}), Tensor()}, {{"axis", int64_t{0}}});
  for (int64_t r = 0; r < 7; ++r) {
    const float s = q[1].data_as<float>()[r];
    int maxq = 0;
    for (int64_t k = 0; k < 33; ++k) {
      EXPECT_LE(std::fabs(d[0].data_as<float>()[r * 33 + k] - x.data_as<float>()[r * 33 + k]),
                0.5f * s * 1.0001f);
      maxq = std::max(maxq, std::abs(int(q[0].data_as<int8_t>()[r * 33 + k])));
    }
    EXPECT_EQ(maxq, 127) << "symmetric: the row's absmax maps to 127";
  }
}

// reduce_range: ONNX Runtime's 7-bit levels, each row spanning them.
TEST(Quantize, ReduceRangeLevels) {
  Tensor x = floats({6, 257}, -2, 3, 11);
  struct L {
    const char* dt;
    int64_t sym;
    int lo, hi;
  };
  for (const L& l :
       {L{"i8", 1, -64, 64}, L{"u8", 1, 64, 192}, L{"i8", 0, -64, 63}, L{"u8", 0, 0, 127}}) {
    SCOPED_TRACE(std::string(l.dt) + " symmetric " + std::to_string(l.sym));
    auto q =
        call("quantize_dynamic", {x},
             {{"dtype", std::string(l.dt)}, {"symmetric", l.sym}, {"reduce_range", int64_t{1}}});
    const bool u8 = std::string(l.dt) == "u8";
    for (int64_t r = 0; r < 6; ++r) {
      int lo = 1000, hi = -1000;
      for (int64_t k = 0; k < 257; ++k) {
        const int v =
            u8 ? q[0].data_as<uint8_t>()[r * 257 + k] : q[0].data_as<int8_t>()[r * 257 + k];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      // Symmetric: the row's absmax (the positive side here) maps to the top level.
      EXPECT_EQ(hi, l.hi);
      if (l.sym == 0) {
        EXPECT_EQ(lo, l.lo);
      }
      EXPECT_GE(lo, l.lo);
    }
  }
}

// Weights quantized per output channel with reduce_range run the 7-bit
// kernel on plain AVX2, exactly.
TEST(MatmulInt8, ReduceRangeWeightsTakeTheSevenBitKernel) {
  const int64_t M = 9, N = 40, K = 300;
  auto wq = call("quantize_dynamic", {floats({N, K}, -1, 1, 12)}, {{"reduce_range", int64_t{1}}});
  const Tensor& w = wq[0];
  Tensor a = bytes_tensor({M, K}, DType::i8, 13);
  const PackedInt8Matrix p = pack_int8_matrix(w);
  if (active_isa() == Isa::avx2 && !has_avx_vnni() && !has_avx512_vnni()) {
    EXPECT_EQ(p.kernel(), "3x16_avx2_w7");
  }
  Tensor y = Tensor::zeros({M, N}, DType::i32);
  matmul_int8_packed(a, p, y);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += int64_t{a.data_as<int8_t>()[m * K + k]} * w.data_as<int8_t>()[n * K + k];
      ASSERT_EQ(y.data_as<int32_t>()[m * N + n], acc) << m << "," << n;
    }
}

TEST(MatmulInt8, SignedEqualsShiftedUnsignedWithZeroPoint) {
  const int64_t M = 13, N = 37, K = 70;
  Tensor a = bytes_tensor({M, K}, DType::i8, 1), w = bytes_tensor({N, K}, DType::i8, 2);
  Tensor au = Tensor::empty({M, K}, DType::u8);
  for (int64_t i = 0; i < M * K; ++i)
    au.data_as<uint8_t>()[i] = static_cast<uint8_t>(a.data_as<int8_t>()[i] + 128);
  Tensor zp = Tensor::from<uint8_t>({128}, {});
  const Attrs i32 = {{"output", std::string("i32")}};
  auto ys = call("matmul_int8", {a, w, Tensor(), Tensor(), Tensor()}, i32);
  auto yu = call("matmul_int8", {au, w, Tensor(), Tensor(), Tensor(), zp}, i32);
  EXPECT_TRUE(same_bits(ys[0], yu[0]));
  // And the exact integer value of one element.
  int64_t acc = 0;
  for (int64_t k = 0; k < K; ++k)
    acc += int64_t{a.data_as<int8_t>()[5 * K + k]} * w.data_as<int8_t>()[7 * K + k];
  EXPECT_EQ(ys[0].data_as<int32_t>()[5 * N + 7], acc);
}

TEST(MatmulInt8, PackedApiMatchesOp) {
  for (int64_t K : {300, 1030}) {  // both AVX-512 tilings (12x32 below K = 1024, 6x64 above)
    const int64_t M = 37, N = 70;
    Tensor a = bytes_tensor({M, K}, DType::i8, 3), w = bytes_tensor({N, K}, DType::i8, 4);
    Tensor as = floats({M, 1}, 0.001f, 0.002f, 5), ws = floats({N}, 0.01f, 0.02f, 6);
    Tensor bias = floats({N}, -1, 1, 7);
    PackedInt8Matrix p = pack_int8_matrix(w);
    EXPECT_EQ(p.n(), N);
    EXPECT_EQ(p.k(), K);
    auto y_op = call("matmul_int8", {a, w, as, ws, bias}, {{"activation", std::string("silu")}});
    Tensor y = Tensor::zeros({M, N}, DType::f32);
    Int8MatmulParams prm;
    prm.a_scale = &as;
    prm.w_scale = &ws;
    prm.bias = &bias;
    prm.activation = "silu";
    matmul_int8_packed(a, p, y, prm);
    EXPECT_TRUE(same_bits(y, y_op[0]));
    // f16 output: the same f32 epilogue values, rounded once to f16.
    auto h_op = call("matmul_int8", {a, w, as, ws, bias},
                     {{"activation", std::string("silu")}, {"output", std::string("f16")}});
    Tensor h = Tensor::zeros({M, N}, DType::f16);
    matmul_int8_packed(a, p, h, prm);
    EXPECT_TRUE(same_bits(h, h_op[0]));
    for (int64_t i = 0; i < M * N; ++i)
      ASSERT_EQ(h.data_as<f16>()[i].bits, to_f16(y.data_as<float>()[i]).bits) << i;
    auto r_op = call("matmul_int8", {a, w}, {{"output", std::string("i32")}});
    Tensor r = Tensor::zeros({M, N}, DType::i32);
    matmul_int8_packed(a, p, r);
    EXPECT_TRUE(same_bits(r, r_op[0]));
  }
}

// w's bytes folded into [-64, 63] (a new tensor).
Tensor seven_bit(const Tensor& w) {
  Tensor r = Tensor::empty(w.shape(), DType::i8);
  for (int64_t i = 0; i < w.numel(); ++i)
    r.data_as<int8_t>()[i] = static_cast<int8_t>(w.data_as<int8_t>()[i] / 2);
  return r;
}

// A constant weight (TensorDesc::constant) is packed once at create: no W in
// the workspace, and the bits of the per-call form and of the packed API.
TEST(MatmulInt8, ConstantWeightIsPackedAtCreateWithTheSameBits) {
  for (int64_t K : {300, 1030}) {
    const int64_t M = 37, N = 70;
    Tensor a = bytes_tensor({M, K}, DType::i8, 3), w = bytes_tensor({N, K}, DType::i8, 4);
    Tensor as = floats({M, 1}, 0.001f, 0.002f, 5), ws = floats({N}, 0.01f, 0.02f, 6);
    Tensor bias = floats({N}, -1, 1, 7);
    const Attrs attrs{{"activation", std::string("silu")}};
    for (const KernelDesc& k : Registry::global().kernels("matmul_int8")) {
      if (k.isa > active_isa() || (k.cpu_ok && !k.cpu_ok()) ||
          k.name.find("_ref") != std::string::npos)
        continue;
      SCOPED_TRACE(k.name + " K=" + std::to_string(K));
      Op per_call, packed;
      try {
        per_call = Op::create("matmul_int8", {a, w, as, ws, bias}, attrs, k.name);
      } catch (const Error&) {
        continue;  // the wide kernel declines K < 1024
      }
      // Weights of the full range, then within 7 bits (plain AVX2's 7-bit
      // form, per call and packed alike).
      for (const Tensor& wk : {w, seven_bit(w)}) {
        packed = Op::create("matmul_int8",
                            {a.desc(), TensorDesc::constant(wk), as.desc(), ws.desc(), bias.desc()},
                            attrs, k.name);
        EXPECT_LT(packed.workspace_bytes(), per_call.workspace_bytes());
        Tensor want = per_call({a, wk, as, ws, bias})[0];
        Tensor got = packed({a, Tensor(), as, ws, bias})[0];
        EXPECT_TRUE(same_bits(want, got));
      }
    }
    // The packed API on the kernel dispatch picks.
    Op packed =
        Op::create("matmul_int8",
                   {a.desc(), TensorDesc::constant(w), as.desc(), ws.desc(), bias.desc()}, attrs);
    Tensor y = Tensor::zeros({M, N}, DType::f32);
    Int8MatmulParams prm;
    prm.a_scale = &as;
    prm.w_scale = &ws;
    prm.bias = &bias;
    prm.activation = "silu";
    matmul_int8_packed(a, pack_int8_matrix(w), y, prm);
    EXPECT_TRUE(same_bits(y, packed({a, Tensor(), as, ws, bias})[0]));
  }
}

// W x A at the extremes of their ranges, each k alternating so that every
// pair of products has the largest magnitude (vpmaddubsw's 16-bit pair sums
// would saturate at -65280 with full-range weights), exact against int64.
// With 7-bit weights plain AVX2 takes its vpmaddubsw form; with full-range
// weights it must not, per call or packed.
void expect_exact_at_extremes(int8_t w_lo, int8_t w_hi, const char* avx2_kernel) {
  const int64_t M = 7, N = 35, K = 2 * 4100 + 3;  // K tail, several K blocks
  Tensor a = Tensor::empty({M, K}, DType::i8), w = Tensor::empty({N, K}, DType::i8);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) a.data_as<int8_t>()[m * K + k] = (m + k / 3) % 2 ? 127 : -128;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) w.data_as<int8_t>()[n * K + k] = (n + k / 5) % 3 ? w_lo : w_hi;
  Tensor want = Tensor::empty({M, N}, DType::i32);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += int64_t{a.data_as<int8_t>()[m * K + k]} * w.data_as<int8_t>()[n * K + k];
      want.data_as<int32_t>()[m * N + n] = static_cast<int32_t>(acc);
    }
  const PackedInt8Matrix p = pack_int8_matrix(w);
  if (active_isa() == Isa::avx2 && !has_avx_vnni() && !has_avx512_vnni()) {
    EXPECT_EQ(p.kernel(), avx2_kernel);
  }
  Tensor y = Tensor::zeros({M, N}, DType::i32);
  matmul_int8_packed(a, p, y);
  EXPECT_TRUE(same_bits(y, want));
  const Attrs i32 = {{"output", std::string("i32")}};
  for (const KernelDesc& k : Registry::global().kernels("matmul_int8")) {
    if (k.isa > active_isa() || (k.cpu_ok && !k.cpu_ok())) continue;
    SCOPED_TRACE(k.name);
    Op per_call = Op::create("matmul_int8", {a, w}, i32, k.name);
    EXPECT_TRUE(same_bits(per_call({a, w})[0], want));
    Op packed = Op::create("matmul_int8", {a.desc(), TensorDesc::constant(w)}, i32, k.name);
    EXPECT_TRUE(same_bits(packed({a, Tensor()})[0], want));
  }
}

TEST(MatmulInt8, SevenBitWeightsAreExactAtTheExtremes) {
  expect_exact_at_extremes(-64, 64, "3x16_avx2_w7");
}

TEST(MatmulInt8, FullRangeWeightsAreExactWithoutVnni) {
  expect_exact_at_extremes(-128, 127, "3x16_avx2");
}

// f16 activations: the same results as f32 activations holding the same
// (f16-representable) values, rounded once to f16 (tiled and panel paths).
TEST(MatmulWq, F16ActivationsMatchF32) {
  for (int64_t M : {3, 40}) {
    const int64_t N = 33, K = 256;
    Tensor xf = floats({M, K}, -1, 1, 11);
    Tensor xh = Tensor::empty({M, K}, DType::f16);
    for (int64_t i = 0; i < M * K; ++i) {
      const f16 v = to_f16(xf.data_as<float>()[i]);
      xh.data_as<f16>()[i] = v;
      xf.data_as<float>()[i] = to_f32(v);
    }
    Tensor w = bytes_tensor({N, K / 2}, DType::u8, 12);
    Tensor s = floats({N, K / 128}, 0.01f, 0.02f, 13);
    const Attrs at = {{"bits", int64_t{4}}, {"group", int64_t{128}}};
    const Tensor yf = call("matmul_wq", {xf, w, s}, at)[0];
    const Tensor yh = call("matmul_wq", {xh, w, s}, at)[0];
    ASSERT_EQ(yh.dtype(), DType::f16);
    for (int64_t i = 0; i < M * N; ++i)
      ASSERT_EQ(yh.data_as<f16>()[i].bits, to_f16(yf.data_as<float>()[i]).bits)
          << "M " << M << " " << i;
  }
}

TEST(MatmulWq, DefaultZeroPointIsEight) {
  const int64_t M = 3, N = 9, K = 128;
  Tensor x = floats({M, K}, -1, 1, 8);
  Tensor w = bytes_tensor({N, K / 2}, DType::u8, 9);
  Tensor s = floats({N, K / 32}, 0.01f, 0.02f, 10);
  Tensor z = Tensor::empty({N, K / 32}, DType::u8);
  std::memset(z.data(), 8, z.nbytes());
  const Attrs at = {{"bits", int64_t{4}}, {"group", int64_t{32}}};
  auto y0 = call("matmul_wq", {x, w, s}, at);
  auto y1 = call("matmul_wq", {x, w, s, z}, at);
  EXPECT_TRUE(same_bits(y0[0], y1[0]));
}

void expect_error(const std::string& op, const std::vector<Tensor>& in, const Attrs& at,
                  const std::string& needle) {
  try {
    call(op, in, at);
    ADD_FAILURE() << op << ": no error, expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(QuantErrors, ClearMessages) {
  Tensor x = floats({2, 96}, -1, 1, 1);
  Tensor w4 = bytes_tensor({5, 48}, DType::u8, 2);
  Tensor s = floats({5, 1}, 0.01f, 0.02f, 3);
  expect_error("matmul_wq", {x, w4, s}, {{"group", int64_t{64}}}, "multiple of group");
  expect_error("matmul_wq", {x, w4, s}, {{"bits", int64_t{3}}}, "4 or 8");
  expect_error("matmul_wq", {x, w4, s}, {{"group", int64_t{96}}}, "32, 64 or 128");
  Tensor a = bytes_tensor({4, 16}, DType::i8, 4), w = bytes_tensor({8, 16}, DType::i8, 5);
  Tensor one = Tensor::from<float>({0.1f}, {});
  expect_error("matmul_int8", {a, w, one, one}, {{"output", std::string("i8")}}, "y_scale");
  expect_error("matmul_int8", {a, w}, {{"output", std::string("f32")}}, "a_scale");
  expect_error("matmul_int8", {a, bytes_tensor({8, 15}, DType::i8, 6)},
               {{"output", std::string("i32")}}, "[N, 16]");
  expect_error("quantize", {x, floats({3}, 0.1f, 0.2f, 7)}, {}, "x.shape[1]");
  expect_error("quantize", {x, one}, {{"dtype", std::string("i4")}}, "i8|u8");
}

}  // namespace
}  // namespace opsnn

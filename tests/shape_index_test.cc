// Error paths and exact-value checks of the shape and index ops that the
// case tables (random in-range inputs) cannot reach: out-of-range indices at
// run time, bad attributes, cast of NaN/Inf/out-of-range values and
// round-to-nearest-even ties, NaN order in topk, the sampling RNG.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

using V = std::vector<int64_t>;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> kernel_names(const std::string& op) {
  std::vector<std::string> r;
  for (const KernelDesc& k : Registry::global().kernels(op))
    if (k.isa <= active_isa()) r.push_back(k.name);
  return r;
}

TEST(Gather, OutOfRangeIndexIsARunTimeError) {
  Tensor x = Tensor::zeros({4, 3}, DType::f32);
  Tensor idx = Tensor::from<int64_t>({0, -4, 4}, {3});
  for (const std::string& k : kernel_names("gather")) {
    Op op = Op::create("gather", {x, idx}, {}, k);
    EXPECT_NE(error_of([&] {
                op({x, idx});
              }).find("gather: input 'indices': expected indices in"),
              std::string::npos)
        << k;
  }
  Tensor ok = Tensor::from<int32_t>({-4, 3}, {2});
  EXPECT_EQ(call("gather", {x, ok})[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(error_of([&] {
              call("gather", {x, Tensor::zeros({2}, DType::f32)});
            }),
            "gather: input 'indices': expected dtype i64|i32, got f32");
  EXPECT_EQ(error_of([&] {
              call("gather", {x, idx}, {{"axis", int64_t{2}}});
            }),
            "gather: attribute 'axis': expected an axis in [-2, 2), got 2");
}

TEST(Embedding, NegativeOrLargeIdIsARunTimeError) {
  Tensor t = Tensor::zeros({5, 8}, DType::bf16);
  for (const std::string& k : kernel_names("embedding")) {
    for (int64_t bad : {int64_t{-1}, int64_t{5}}) {
      Tensor ids = Tensor::from<int64_t>({1, bad}, {2});
      Op op = Op::create("embedding", {t, ids}, {}, k);
      EXPECT_NE(error_of([&] {
                  op({t, ids});
                }).find("embedding: input 'ids': expected indices in [0, 5)"),
                std::string::npos)
          << k;
    }
  }
}

TEST(Rope, PositionOutsideTableIsARunTimeError) {
  Tensor x = Tensor::zeros({1, 2, 1, 4}, DType::f32), c = Tensor::zeros({3, 2}, DType::f32);
  Tensor pos = Tensor::from<int64_t>({0, 3}, {2});
  for (const std::string& k : kernel_names("rope")) {
    Op op = Op::create("rope", {x, c, c, pos}, {}, k);
    EXPECT_NE(error_of([&] {
                op({x, c, c, pos});
              }).find("rope: input 'positions': expected values in [0, 3)"),
              std::string::npos)
        << k;
  }
  EXPECT_EQ(error_of([&] {
              call("rope", {x, c, c}, {{"rotary_dim", int64_t{3}}});
            }),
            "rope: attribute 'rotary_dim': expected an even value in [0, 4] (0 = head dim), got 3");
  Tensor small = Tensor::zeros({1, 2}, DType::f32);
  EXPECT_EQ(error_of([&] {
              call("rope", {x, small, small});
            }),
            "rope: input 'cos': expected at least L = 2 rows (no positions given), got [1, 2]");
}

TEST(ShapeOps, RejectBadAttributesClearly) {
  Tensor x = Tensor::zeros({2, 3, 4}, DType::f32);
  EXPECT_EQ(error_of([&] {
              call("reshape", {x}, {{"shape", V{5, -1}}});
            }),
            "reshape: attribute 'shape': expected a shape with 24 elements (as input [2, 3, 4]), "
            "got [5, -1]");
  EXPECT_EQ(error_of([&] {
              call("reshape", {x}, {{"shape", V{-1, -1}}});
            }),
            "reshape: attribute 'shape': expected at most one -1, got [-1, -1]");
  EXPECT_EQ(error_of([&] {
              call("transpose", {x}, {{"perm", V{0, 0, 1}}});
            }),
            "transpose: attribute 'perm': expected a permutation of 0..2, got [0, 0, 1]");
  Tensor y = Tensor::zeros({2, 5, 4}, DType::f32);
  EXPECT_NE(error_of([&] {
              call("concat", {x, y});
            }).find("concat: input 'inputs[1]': expected shape [2, 3, 4]"),
            std::string::npos);
  EXPECT_EQ(call("concat", {x, y}, {{"axis", int64_t{-2}}})[0].shape(), (Shape{2, 8, 4}));
  EXPECT_EQ(error_of([&] {
              call("concat", {x, Tensor::zeros({2, 3, 4}, DType::f16)});
            }),
            "concat: input 'inputs[1]': expected dtype f32 (as input 'inputs[0]'), got f16");
  EXPECT_EQ(error_of([&] {
              Op::create("split", {x}, {{"split", V{1, 2}}, {"axis", int64_t{2}}});
            }),
            "split: attribute 'split': expected sizes summing to 4 (dim 2), got [1, 2] (sum 3)");
  EXPECT_EQ(Op::create("split", {x}, {{"num_outputs", int64_t{3}}, {"axis", int64_t{1}}})
                .outputs()
                .size(),
            3u);
  EXPECT_EQ(error_of([&] {
              call("slice", {x}, {{"starts", V{0}}, {"ends", V{1}}, {"steps", V{0}}});
            }),
            "slice: attribute 'steps': expected non-zero steps, got [0]");
  EXPECT_EQ(error_of([&] {
              call("pad", {x}, {{"pads", V{0, 0, 4, 0, 0, 0}}, {"mode", std::string("reflect")}});
            }),
            "pad: attribute 'pads': expected reflect pads <= dim - 1 = 3 on axis 2, got [0, 0, 4, "
            "0, 0, 0]");
  EXPECT_EQ(error_of([&] {
              call("pad", {x}, {{"pads", V{1, 1}}});
            }),
            "pad: attribute 'pads': expected 6 values (2 x rank, ONNX order), got 2");
  EXPECT_EQ(error_of([&] {
              call("pad", {x}, {{"pads", V{0, 0, 0, 0, 0, 0}}, {"mode", std::string("wrap")}});
            }),
            "pad: attribute 'mode': expected constant|reflect|edge, got 'wrap'");
  EXPECT_EQ(error_of([&] {
              call("expand", {x}, {{"shape", V{2, 5, 4}}});
            }),
            "expand: attribute 'shape': expected a shape that input [2, 3, 4] broadcasts to, got "
            "[2, 5, 4]");
  EXPECT_EQ(
      error_of([&] {
        call("cast", {x}, {{"to", std::string("f8")}});
      }),
      "cast: attribute 'to': expected a dtype name (f32|f16|bf16|i8|u8|i32|i64|bool), got 'f8'");
  EXPECT_EQ(error_of([&] {
              call("topk", {x}, {{"k", int64_t{5}}});
            }),
            "topk: attribute 'k': expected 0 <= k <= 4 (dim 2), got 5");
  EXPECT_EQ(error_of([&] {
              call("cumsum", {x}, {{"exclusive", int64_t{2}}});
            }),
            "cumsum: attribute 'exclusive': expected 0 or 1, got 2");
  Tensor logits = Tensor::zeros({2, 10}, DType::f32);
  EXPECT_EQ(error_of([&] {
              call("sample", {logits}, {{"p", 0.0}});
            }),
            "sample: attribute 'p': expected 0 < p <= 1, got 0.000000");
  EXPECT_EQ(error_of([&] { call("sample", {x}); }),
            "sample: input 'logits': expected rank 2, got rank 3 [2, 3, 4]");
}

TEST(Slice, ClampsLikeOnnx) {
  Tensor x = Tensor::empty({10}, DType::i32);
  for (int i = 0; i < 10; ++i) x.data_as<int32_t>()[i] = i;
  auto run = [&](V st, V en, V sp) {
    Tensor y = call("slice", {x}, {{"starts", st}, {"ends", en}, {"steps", sp}})[0];
    std::vector<int32_t> r(y.data_as<int32_t>(), y.data_as<int32_t>() + y.numel());
    return r;
  };
  EXPECT_EQ(run({-3}, {INT64_MAX}, {1}), (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(run({INT64_MAX}, {INT64_MIN}, {-4}), (std::vector<int32_t>{9, 5, 1}));
  EXPECT_EQ(run({-100}, {3}, {2}), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(run({8}, {-11}, {-3}), (std::vector<int32_t>{8, 5, 2}));
  EXPECT_EQ(run({5}, {5}, {1}), (std::vector<int32_t>{}));
}

TEST(Cast, SaturatesAndRoundsAsDocumented) {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  // 1 + 2^-8 is a tie between bf16 1 and 1 + 2^-7: nearest even gives 1; 1 + 3 * 2^-8 gives 1 +
  // 2^-6.
  std::vector<float> in = {nan,    inf,    -inf,  3.7f,        -3.7f,      1e10f,
                           -1e10f, 255.9f, -0.5f, 1.00390625f, 1.01171875f};
  // 17 elements: also exercises the vector body and the tail of every ISA.
  while (in.size() < 37) in.push_back(static_cast<float>(in.size()) * 11.5f - 200);
  Tensor x = Tensor::empty({static_cast<int64_t>(in.size())}, DType::f32);
  std::memcpy(x.data(), in.data(), in.size() * 4);
  for (const std::string& k : kernel_names("cast")) {
    Tensor i32 = Op::create("cast", {x}, {{"to", std::string("i32")}}, k)({x})[0];
    const int32_t* p = i32.data_as<int32_t>();
    EXPECT_EQ(p[0], 0) << k;
    EXPECT_EQ(p[1], INT32_MAX) << k;
    EXPECT_EQ(p[2], INT32_MIN) << k;
    EXPECT_EQ(p[3], 3) << k;
    EXPECT_EQ(p[4], -3) << k;
    EXPECT_EQ(p[5], INT32_MAX) << k;
    EXPECT_EQ(p[6], INT32_MIN) << k;
    Tensor u8 = Op::create("cast", {x}, {{"to", std::string("u8")}}, k)({x})[0];
    const uint8_t* q = u8.data_as<uint8_t>();
    EXPECT_EQ((std::vector<int>{q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8]}),
              (std::vector<int>{0, 255, 0, 3, 0, 255, 0, 255, 0}))
        << k;
    Tensor i8 = Op::create("cast", {x}, {{"to", std::string("i8")}}, k)({x})[0];
    EXPECT_EQ(i8.data_as<int8_t>()[5], 127) << k;
    EXPECT_EQ(i8.data_as<int8_t>()[6], -128) << k;
    Tensor i64 = Op::create("cast", {x}, {{"to", std::string("i64")}}, k)({x})[0];
    EXPECT_EQ(i64.data_as<int64_t>()[1], INT64_MAX) << k;
    EXPECT_EQ(i64.data_as<int64_t>()[5], 10000000000LL) << k;
    Tensor b = Op::create("cast", {x}, {{"to", std::string("bool")}}, k)({x})[0];
    EXPECT_EQ(b.data_as<uint8_t>()[0], 1) << k;  // NaN != 0
    EXPECT_EQ(b.data_as<uint8_t>()[8], 1) << k;
    Tensor h = Op::create("cast", {x}, {{"to", std::string("bf16")}}, k)({x})[0];
    EXPECT_EQ(h.data_as<uint16_t>()[9], 0x3f80) << k;   // tie -> even (1.0)
    EXPECT_EQ(h.data_as<uint16_t>()[10], 0x3f82) << k;  // tie -> even (1 + 2^-6)
    EXPECT_TRUE(std::isnan(bf16_bits_to_f32(h.data_as<uint16_t>()[0]))) << k;
    Tensor f = Op::create("cast", {x}, {{"to", std::string("f16")}}, k)({x})[0];
    EXPECT_EQ(f.data_as<uint16_t>()[5], 0x7c00) << k;  // 1e10 overflows to +Inf
    EXPECT_EQ(f.data_as<uint16_t>()[9], 0x3c04) << k;  // 1 + 2^-8 is exact in f16
  }
  Tensor big = Tensor::from<int64_t>({INT64_MAX, INT64_MIN, 300, -300}, {4});
  Tensor r = call("cast", {big}, {{"to", std::string("i32")}})[0];
  EXPECT_EQ((std::vector<int32_t>(r.data_as<int32_t>(), r.data_as<int32_t>() + 4)),
            (std::vector<int32_t>{INT32_MAX, INT32_MIN, 300, -300}));
  Tensor r8 = call("cast", {big}, {{"to", std::string("u8")}})[0];
  EXPECT_EQ((std::vector<int>(r8.data_as<uint8_t>(), r8.data_as<uint8_t>() + 4)),
            (std::vector<int>{255, 0, 255, 0}));
}

TEST(TopK, NaNCountsAsLargestAndTiesGoToLowerIndex) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::from<float>({1, nan, 3, 3, -2, 3}, {6});
  for (const std::string& k : kernel_names("topk")) {
    auto out = Op::create("topk", {x}, {{"k", int64_t{3}}}, k)({x});
    EXPECT_EQ((std::vector<int64_t>(out[1].data_as<int64_t>(), out[1].data_as<int64_t>() + 3)),
              (V{1, 2, 3}))
        << k;
    auto small = Op::create("topk", {x}, {{"k", int64_t{2}}, {"largest", int64_t{0}}}, k)({x});
    EXPECT_EQ((std::vector<int64_t>(small[1].data_as<int64_t>(), small[1].data_as<int64_t>() + 2)),
              (V{4, 0}))
        << k;
  }
}

TEST(TopK, NaNInALongRowIsKeptByTheFilter) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::empty({300}, DType::f32);
  for (int i = 0; i < 300; ++i) x.data_as<float>()[i] = static_cast<float>(i % 7);
  x.data_as<float>()[250] = nan;
  for (const std::string& k : kernel_names("topk")) {
    auto out = Op::create("topk", {x}, {{"k", int64_t{3}}}, k)({x});
    EXPECT_EQ((std::vector<int64_t>(out[1].data_as<int64_t>(), out[1].data_as<int64_t>() + 3)),
              (V{250, 6, 13}))
        << k;
    auto small = Op::create("topk", {x}, {{"k", int64_t{3}}, {"largest", int64_t{0}}}, k)({x});
    EXPECT_EQ((std::vector<int64_t>(small[1].data_as<int64_t>(), small[1].data_as<int64_t>() + 3)),
              (V{0, 7, 14}))
        << k;
  }
}

TEST(Sample, DeterministicPerSeedAndDistributedAsTheWeights) {
  const int64_t B = 4000, Vn = 4;
  Tensor logits = Tensor::empty({B, Vn}, DType::f32);
  // Probabilities 0.1, 0.2, 0.3, 0.4.
  for (int64_t b = 0; b < B; ++b)
    for (int64_t v = 0; v < Vn; ++v)
      logits.data_as<float>()[b * Vn + v] = std::log(0.1f * static_cast<float>(v + 1));
  for (const std::string& k : kernel_names("sample")) {
    Op op = Op::create("sample", {logits}, {{"seed", int64_t{7}}}, k);
    Tensor a = op({logits})[0], b = op({logits})[0];
    ASSERT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0) << k;
    std::vector<int> hist(Vn, 0);
    for (int64_t i = 0; i < B; ++i) hist[static_cast<size_t>(a.data_as<int64_t>()[i])]++;
    for (int64_t v = 0; v < Vn; ++v) {
      const double expect = 0.1 * static_cast<double>(v + 1) * B;
      EXPECT_NEAR(hist[static_cast<size_t>(v)], expect, 5 * std::sqrt(expect))
          << k << " token " << v;
    }
    Tensor other = Op::create("sample", {logits}, {{"seed", int64_t{8}}}, k)({logits})[0];
    EXPECT_NE(std::memcmp(a.data(), other.data(), a.nbytes()), 0) << k;
    // top-k 2 keeps tokens 3 and 2 only; top-p 0.35 keeps token 3 only.
    Tensor t2 = Op::create("sample", {logits}, {{"k", int64_t{2}}}, k)({logits})[0];
    for (int64_t i = 0; i < B; ++i) ASSERT_GE(t2.data_as<int64_t>()[i], 2) << k;
    Tensor tp = Op::create("sample", {logits}, {{"p", 0.35}}, k)({logits})[0];
    for (int64_t i = 0; i < B; ++i) ASSERT_EQ(tp.data_as<int64_t>()[i], 3) << k;
  }
}

TEST(Pad, ReflectAndEdgeValues) {
  Tensor x = Tensor::from<float>({1, 2, 3}, {3});
  auto run = [&](const std::string& mode) {
    Tensor y = call("pad", {x}, {{"pads", V{2, 2}}, {"mode", mode}, {"value", 9.0}})[0];
    return std::vector<float>(y.data_as<float>(), y.data_as<float>() + y.numel());
  };
  EXPECT_EQ(run("constant"), (std::vector<float>{9, 9, 1, 2, 3, 9, 9}));
  EXPECT_EQ(run("reflect"), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(run("edge"), (std::vector<float>{1, 1, 1, 2, 3, 3, 3}));
}

}  // namespace
}  // namespace opsnn

// One test per defect of the special-values and error-paths issue, named
// after it; each failed before its fix. The generic special-value sweep of
// every op (NaN, +-inf, +-FLT_MAX, -0, subnormals) runs in ops_test through
// the checker; these pin the exact values.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>

#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Runs `op` on `x` (f32) with every kernel this machine can run.
template <class Check>
void for_each_kernel(const std::string& op, const std::vector<float>& x, const Attrs& attrs,
                     Check check) {
  Tensor t = Tensor::empty({static_cast<int64_t>(x.size())}, DType::f32);
  for (size_t i = 0; i < x.size(); ++i) t.data_as<float>()[i] = x[i];
  for (const KernelDesc& k : Registry::global().kernels(op)) {
    if (k.isa > active_isa() || (k.cpu_ok && !k.cpu_ok())) continue;
    Tensor y = Op::create(op, {t.desc()}, attrs, k.name)({t})[0];
    for (size_t i = 0; i < x.size(); ++i) check(k.name, x[i], y.data_as<float>()[i]);
  }
}

TEST(SpecialValues, ReluOfNanIsNan) {
  for_each_kernel("relu", {NAN, -NAN, 1.0f, -1.0f}, {}, [](const std::string& k, float x, float y) {
    if (std::isnan(x))
      EXPECT_TRUE(std::isnan(y)) << k;
    else
      EXPECT_EQ(y, x > 0 ? x : 0.0f) << k;
  });
}

TEST(SpecialValues, ClipOfNanIsNan) {
  for_each_kernel("clip", {NAN, 5.0f, -5.0f}, {{"min", -1.5}, {"max", 2.0}},
                  [](const std::string& k, float x, float y) {
                    if (std::isnan(x))
                      EXPECT_TRUE(std::isnan(y)) << k;
                    else
                      EXPECT_EQ(y, std::min(std::max(x, -1.5f), 2.0f)) << k;
                  });
}

TEST(SpecialValues, SiluQuickGeluGeluTanhAtMinusInfAndHugeNegativeAreMinusZero) {
  for (const auto& [op, attrs] :
       std::vector<std::pair<std::string, Attrs>>{{"silu", {}},
                                                  {"quick_gelu", {}},
                                                  {"gelu", {{"approximate", std::string("tanh")}}},
                                                  {"gelu", {}},
                                                  {"mish", {}},
                                                  {"hardswish", {}}}) {
    for_each_kernel(op, {-INFINITY, -3e38f, -1e32f, -FLT_MAX, INFINITY, 1e32f, NAN}, attrs,
                    [&](const std::string& k, float x, float y) {
                      SCOPED_TRACE(op + " " + k + " x=" + std::to_string(x));
                      if (std::isnan(x)) {
                        EXPECT_TRUE(std::isnan(y));
                      } else if (x < 0) {
                        EXPECT_EQ(y, 0.0f);  // -0 or +0, never -inf or -1.8
                      } else if (std::isinf(x)) {
                        EXPECT_EQ(y, x);
                      } else {
                        EXPECT_NEAR(y / x, 1.0, 1e-6);
                      }
                    });
  }
}

TEST(SpecialValues, SampleWithInfiniteLogitsDrawsAnInfiniteOne) {
  Tensor logits = Tensor::from<float>({0, INFINITY, 1, INFINITY, 2, 3}, {1, 6});
  for (int64_t seed = 0; seed < 16; ++seed) {
    Tensor id = call("sample", {logits}, {{"seed", seed}})[0];
    const int64_t got = id.data_as<int64_t>()[0];
    EXPECT_TRUE(got == 1 || got == 3) << "seed " << seed << " drew " << got;
  }
}

TEST(ErrorPaths, ShapeErrorsNameTheOpAndTheArgument) {
  EXPECT_EQ(error_of([] {
              Op::create("gelu", {TensorDesc(DType::f32, {-3, 7})});
            }),
            "gelu: input 'x': expected non-negative dims, got [-3, 7]");
  EXPECT_EQ(error_of([] {
              Op::create("add", {TensorDesc(DType::f32, {int64_t{1} << 40, int64_t{1} << 40}),
                                 TensorDesc(DType::f32, {1})});
            }),
            "add: input 'a': expected an element count that fits in int64, got [1099511627776, "
            "1099511627776]");
  // Broadcast output whose byte size overflows although each input fits.
  EXPECT_EQ(
      error_of([] {
        Op::create("add", {TensorDesc(DType::f32, {int64_t{1} << 31, 1}),
                           TensorDesc(DType::f32, {1, int64_t{1} << 31})});
      }),
      "add: output 'y': expected a byte size that fits in int64, got [2147483648, 2147483648]");
}

TEST(ErrorPaths, ConcatAndSplitOverflowAreCheckedNotUndefined) {
  const int64_t big = int64_t{1} << 62;
  EXPECT_EQ(error_of([&] {
              Op::create("concat", {TensorDesc(DType::u8, {big}), TensorDesc(DType::u8, {big})});
            }),
            "concat: input 'inputs[1]': expected sizes whose sum fits in int64, got "
            "4611686018427387904 + 4611686018427387904 overflows");
  EXPECT_EQ(
      error_of([&] {
        Op::create("split", {TensorDesc(DType::u8, {4})},
                   {{"split", std::vector<int64_t>{big, big, big, big + 4}}});
      }),
      "split: attribute 'split': expected sizes whose sum fits in int64, got 4611686018427387904 "
      "+ 4611686018427387904 overflows");
}

TEST(ErrorPaths, EmbeddingRefusesABoolTable) {
  EXPECT_EQ(
      error_of([] {
        Op::create("embedding", {TensorDesc(DType::boolean, {4, 3}), TensorDesc(DType::i64, {2})});
      }),
      "embedding: input 'table': expected dtype f32|bf16|f16, got bool");
}

TEST(ErrorPaths, OpsListingMatchesWhatEachOpAccepts) {
  // sdpa ran f16 while its schema listed f32 and bf16 only.
  const OpSchema& s = Registry::global().schema("sdpa");
  EXPECT_NE(std::find(s.dtypes.begin(), s.dtypes.end(), DType::f16), s.dtypes.end());
}

}  // namespace
}  // namespace opsnn

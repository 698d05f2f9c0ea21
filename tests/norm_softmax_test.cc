// softmax / log_softmax and the norm family: clear errors on bad input, and
// properties that hold whatever the float64 reference says (rows of softmax
// sum to 1, -inf gives exactly 0, fused forms equal their parts, a large
// mean does not spoil the variance). The case tables themselves run in
// ops_test.cc for every kernel, dtype and forced ISA.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

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

Tensor randn(const Shape& s, uint64_t seed, double lo = -3, double hi = 3, DType t = DType::f32) {
  Tensor x = Tensor::zeros(s, t);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < x.numel(); ++i) x.flat_set(i, u(rng));
  return x;
}

TEST(NormSoftmaxErrors, NameOpArgumentExpectedAndGot) {
  const Tensor x = randn({4, 8}, 1);
  const Tensor i32 = Tensor::zeros({4, 8}, DType::i32);
  EXPECT_EQ(error_of([&] {
              call("softmax", {x}, {{"axis", int64_t{2}}});
            }),
            "softmax: attribute 'axis': expected an axis in [-2, 2), got 2");
  EXPECT_EQ(error_of([&] { call("log_softmax", {i32}); }),
            "log_softmax: input 'x': expected dtype f32, bf16 or f16, got i32");
  EXPECT_EQ(error_of([&] {
              call("layer_norm", {x, randn({4}, 2)});
            }),
            "layer_norm: input 'scale': expected shape [8] (x.shape[axis:]), got [4]");
  EXPECT_EQ(error_of([&] {
              call("layer_norm", {x, randn({4, 8}, 2)}, {{"axis", int64_t{0}}, {"eps", -1.0}});
            }),
            "layer_norm: attribute 'eps': expected a finite value >= 0, got -1.000000");
  EXPECT_EQ(error_of([&] {
              call("rms_norm", {x, randn({8}, 2)}, {{"axis", int64_t{-3}}});
            }),
            "rms_norm: attribute 'axis': expected an axis in [-2, 2), got -3");
  EXPECT_EQ(error_of([&] {
              call("add_layer_norm", {x, randn({4, 7}, 3), randn({8}, 4)});
            }),
            "add_layer_norm: input 'residual': expected shape [4, 8], got [4, 7]");
  EXPECT_EQ(error_of([&] {
              call("add_rms_norm", {x, randn({4, 8}, 3, -3, 3, DType::bf16), randn({8}, 4)});
            }),
            "add_rms_norm: input 'residual': expected dtype f32 (as input 'x'), got bf16");
  EXPECT_EQ(error_of([&] {
              call("add_rms_norm", {x, x});
            }),
            "add_rms_norm: inputs: expected 3 to 4 inputs, got 2");
  EXPECT_EQ(error_of([&] {
              call("ada_layer_norm", {x, randn({4, 8}, 5), randn({4, 8}, 6)});
            }),
            "ada_layer_norm: input 'x': expected rank 3, got rank 2 [4, 8]");
  const Tensor x3 = randn({2, 5, 8}, 7);
  EXPECT_EQ(
      error_of([&] {
        call("ada_layer_norm", {x3, randn({2, 8}, 5), randn({1, 8}, 6)});
      }),
      "ada_layer_norm: input 'scale': expected shape [2, 8] ([B, D] of x [B, L, D]), got [1, 8]");
  const Tensor img = randn({2, 6, 3, 3}, 8);
  EXPECT_EQ(error_of([&] {
              call("group_norm", {img}, {{"num_groups", int64_t{4}}});
            }),
            "group_norm: attribute 'num_groups': expected a divisor of C = 6, got 4");
  EXPECT_EQ(error_of([&] {
              call("group_norm_silu", {img}, {{"num_groups", int64_t{0}}});
            }),
            "group_norm_silu: attribute 'num_groups': expected num_groups >= 1, got 0");
  EXPECT_NE(error_of([&] { call("group_norm", {img}); }).find("num_groups"), std::string::npos);
  EXPECT_EQ(error_of([&] { call("instance_norm", {randn({6}, 9)}); }),
            "instance_norm: input 'x': expected rank >= 2, got rank 1 [6]");
  const Tensor c6 = randn({6}, 10, 0.5, 1), c5 = randn({5}, 11, 0.5, 1);
  EXPECT_EQ(error_of([&] {
              call("batch_norm", {img, c6, c6, c6, c5});
            }),
            "batch_norm: input 'var': expected shape [6] ([C] of x [N, C, ...]), got [5]");
}

TEST(Softmax, RowsSumToOneAndMaskedEntriesAreZero) {
  Tensor x = randn({3, 37}, 12, -50, 50);
  x.flat_set(5, -std::numeric_limits<double>::infinity());
  for (int64_t axis : {int64_t{-1}, int64_t{0}}) {
    Tensor y = call("softmax", {x}, {{"axis", axis}})[0];
    Tensor ly = call("log_softmax", {x}, {{"axis", axis}})[0];
    EXPECT_EQ(y.flat_get(5), 0.0);
    EXPECT_TRUE(std::isinf(ly.flat_get(5)) && ly.flat_get(5) < 0);
    const int64_t outer = axis == 0 ? 37 : 3, n = axis == 0 ? 3 : 37;
    for (int64_t o = 0; o < outer; ++o) {
      double s = 0, ls = 0;
      for (int64_t a = 0; a < n; ++a) {
        const int64_t k = axis == 0 ? a * 37 + o : o * 37 + a;
        s += y.flat_get(k);
        ls += std::exp(ly.flat_get(k));
      }
      EXPECT_NEAR(s, 1.0, 1e-5);
      EXPECT_NEAR(ls, 1.0, 1e-5);
    }
  }
}

TEST(Norm, LayerNormIsStableUnderALargeMean) {
  // One-pass statistics must not cancel: x + 1e4 normalises like x.
  Tensor x = randn({4, 4099}, 13, -1, 1);
  Tensor xs = Tensor::zeros({4, 4099}, DType::f32);
  for (int64_t i = 0; i < x.numel(); ++i) xs.flat_set(i, x.flat_get(i) + 1e4);
  for (const char* op : {"layer_norm", "group_norm"}) {
    Attrs a;
    Tensor xa = x, xb = xs;
    if (std::string(op) == "group_norm") {
      a.set("num_groups", int64_t{1});
      xa = x.reshape({4, 1, 4099});
      xb = xs.reshape({4, 1, 4099});
    }
    Tensor y = call(op, {xa}, a)[0], ys = call(op, {xb}, a)[0];
    double worst = 0;
    for (int64_t i = 0; i < y.numel(); ++i)
      worst = std::max(worst, std::fabs(y.flat_get(i) - ys.flat_get(i)));
    // x + 1e4 is rounded to f32 (ulp 1e-3 at 1e4), so the inputs differ by up to 5e-4 / std 0.58.
    EXPECT_LT(worst, 3e-3) << op;
  }
}

TEST(Norm, FusedFormsEqualTheirParts) {
  const Tensor x = randn({5, 96}, 14), r = randn({5, 96}, 15), g = randn({96}, 16),
               b = randn({96}, 17);
  for (const char* op : {"add_layer_norm", "add_rms_norm"}) {
    auto out = call(op, {x, r, g, b});
    ASSERT_EQ(out.size(), 2u);
    Tensor sum = Tensor::zeros({5, 96}, DType::f32);
    for (int64_t i = 0; i < sum.numel(); ++i) sum.flat_set(i, x.flat_get(i) + r.flat_get(i));
    for (int64_t i = 0; i < sum.numel(); ++i) EXPECT_EQ(out[1].flat_get(i), sum.flat_get(i));
    const std::string base = std::string(op).substr(4);
    Tensor y = base == "layer_norm" ? call(base, {sum, g, b})[0] : call(base, {sum, g})[0];
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double bias = base == "layer_norm" ? 0.0 : b.flat_get(i % 96);
      EXPECT_NEAR(out[0].flat_get(i), y.flat_get(i) + bias, 1e-5) << op;
    }
  }
  const Tensor img = randn({2, 8, 5, 5}, 18), gc = randn({8}, 19), bc = randn({8}, 20);
  Tensor gn = call("group_norm", {img, gc, bc}, {{"num_groups", int64_t{8}}})[0];
  Tensor in = call("instance_norm", {img, gc, bc})[0];
  Tensor gs = call("group_norm_silu", {img, gc, bc}, {{"num_groups", int64_t{8}}})[0];
  for (int64_t i = 0; i < gn.numel(); ++i) {
    EXPECT_NEAR(in.flat_get(i), gn.flat_get(i), 1e-6);
    const double v = gn.flat_get(i);
    EXPECT_NEAR(gs.flat_get(i), v / (1 + std::exp(-v)), 1e-5);
  }
}

TEST(Norm, RowsAreTheBitsOfOneRowCalls) {
  // Within a run of rows the layer and RMS kernels form each next row's
  // statistics while they write the current one; a row called alone takes
  // the plain path. Both must give the same bits, with ordinary stores (37
  // rows) and with streamed ones (4100 rows, over 16 MiB).
  const Tensor g = randn({1024}, 24), b = randn({1024}, 26);
  for (const char* op : {"rms_norm", "layer_norm"})
    for (int64_t rows : {int64_t{37}, int64_t{4100}}) {
      const bool rms = std::string(op) == "rms_norm";
      const Tensor x = randn({rows, 1024}, 25);
      const Tensor y = call(op, rms ? std::vector<Tensor>{x, g} : std::vector<Tensor>{x, g, b})[0];
      const int64_t step = rows > 100 ? 97 : 1;
      for (int64_t r = 0; r < rows; r += step) {
        Tensor xr = Tensor::zeros({1, 1024}, DType::f32);
        for (int64_t i = 0; i < 1024; ++i) xr.flat_set(i, x.flat_get(r * 1024 + i));
        const Tensor yr =
            call(op, rms ? std::vector<Tensor>{xr, g} : std::vector<Tensor>{xr, g, b})[0];
        for (int64_t i = 0; i < 1024; ++i)
          ASSERT_EQ(y.flat_get(r * 1024 + i), yr.flat_get(i))
              << op << " row " << r << " of " << rows;
      }
    }
}

TEST(Norm, AdaLayerNormIsLayerNormWithPerSampleAffine) {
  const Tensor x = randn({2, 3, 40}, 21), shift = randn({2, 40}, 22), scale = randn({2, 40}, 23);
  Tensor y = call("ada_layer_norm", {x, shift, scale})[0];
  Tensor ln = call("layer_norm", {x}, {{"eps", 1e-6}})[0];
  for (int64_t bi = 0; bi < 2; ++bi)
    for (int64_t l = 0; l < 3; ++l)
      for (int64_t d = 0; d < 40; ++d) {
        const int64_t k = (bi * 3 + l) * 40 + d, p = bi * 40 + d;
        EXPECT_NEAR(y.flat_get(k), ln.flat_get(k) * (1 + scale.flat_get(p)) + shift.flat_get(p),
                    1e-5);
      }
}

TEST(Norm, BatchNormUsesTheGivenStatistics) {
  const Tensor x = randn({2, 3, 4}, 24);
  const Tensor scale = Tensor::from<float>({1, 2, 3}, {3}),
               bias = Tensor::from<float>({0, 1, -1}, {3});
  const Tensor mean = Tensor::from<float>({0.5f, -1, 2}, {3}),
               var = Tensor::from<float>({1, 4, 0.25f}, {3});
  Tensor y = call("batch_norm", {x, scale, bias, mean, var}, {{"eps", 0.0}})[0];
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = (i / 4) % 3;
    const double want =
        (x.flat_get(i) - mean.flat_get(c)) / std::sqrt(var.flat_get(c)) * scale.flat_get(c) +
        bias.flat_get(c);
    EXPECT_NEAR(y.flat_get(i), want, 1e-5);
  }
}

}  // namespace
}  // namespace opsnn

// Bad input, NaN rules, conventions and the non-temporal path of the binary,
// where, gated and reduction ops, for every kernel the active ISA allows.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
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

// Runs `op` with every kernel this machine can run (reference included).
void for_each_kernel(const std::string& op, const std::function<void(const std::string&)>& fn) {
  for (const KernelDesc& k : Registry::global().kernels(op)) {
    if (k.isa > active_isa()) continue;
    SCOPED_TRACE(k.name);
    fn(k.name);
  }
}

std::vector<Tensor> run_with(const std::string& op, const std::vector<Tensor>& ins,
                             const Attrs& attrs, const std::string& kernel) {
  return Op::create(op, ins, attrs, kernel)(ins);
}

TEST(BinaryOps, RejectBadInputs) {
  Tensor a = Tensor::zeros({3, 4}, DType::f32);
  EXPECT_EQ(error_of([&] {
              Op::create("add", {a, Tensor::zeros({4}, DType::bf16)});
            }),
            "add: input 'b': expected dtype f32 (as input 'a'), got bf16");
  EXPECT_EQ(error_of([&] {
              Op::create("mul", {a, Tensor::zeros({3}, DType::f32)});
            }),
            "mul: inputs: expected shapes that broadcast, got [3, 4] and [3]");
  EXPECT_EQ(
      error_of([&] {
        Op::create("pow", {Tensor::zeros({4}, DType::boolean), Tensor::zeros({4}, DType::boolean)});
      }),
      "pow: input 'a': expected dtype f32|bf16|f16|i8|u8|i32|i64, got bool");
  EXPECT_EQ(error_of([&] {
              Op::create("where", {a, a, a});
            }),
            "where: input 'cond': expected dtype bool|u8, got f32");
  Tensor c = Tensor::zeros({3, 4}, DType::boolean);
  EXPECT_EQ(error_of([&] {
              Op::create("where", {c, a, Tensor::zeros({4}, DType::f16)});
            }),
            "where: input 'b': expected dtype f32 (as input 'a'), got f16");
  EXPECT_EQ(error_of([&] {
              Op::create("where", {Tensor::zeros({2, 1, 5}, DType::boolean), a, a});
            }),
            "where: inputs: expected shapes that broadcast, got [2, 1, 5] and [3, 4]");
  const Tensor deep = Tensor::zeros(Shape(65, 1), DType::f32);  // past the broadcast rank limit
  EXPECT_EQ(error_of([&] {
              Op::create("add", {deep, deep});
            }),
            "broadcast: output rank: expected at most 64, got 65");
}

TEST(BinaryOps, BroadcastShapesAndNaN) {
  Tensor a = Tensor::from<float>({1, NAN, 3, -1}, {4, 1});
  Tensor b = Tensor::from<float>({2, 0, NAN}, {1, 3});
  for_each_kernel("maximum", [&](const std::string& k) {
    Tensor y = run_with("maximum", {a, b}, {}, k)[0];
    ASSERT_EQ(y.shape(), (Shape{4, 3}));
    EXPECT_EQ(y.get({0, 0}), 2);
    EXPECT_EQ(y.get({0, 1}), 1);
    EXPECT_TRUE(std::isnan(y.get({0, 2})));
    EXPECT_TRUE(std::isnan(y.get({1, 0})));
    EXPECT_EQ(y.get({3, 1}), 0);
  });
  for_each_kernel("minimum", [&](const std::string& k) {
    Tensor y = run_with("minimum", {a, b}, {}, k)[0];
    EXPECT_EQ(y.get({2, 0}), 2);
    EXPECT_TRUE(std::isnan(y.get({1, 1})));
    EXPECT_TRUE(std::isnan(y.get({2, 2})));
  });
  Tensor base = Tensor::from<float>({-2, -2, 0, 4, 1}, {5});
  Tensor ex = Tensor::from<float>({3, 0.5, 0, 0.5, NAN}, {5});
  for_each_kernel("pow", [&](const std::string& k) {
    Tensor y = run_with("pow", {base, ex}, {}, k)[0];
    EXPECT_NEAR(y.flat_get(0), -8, 1e-5);
    EXPECT_TRUE(std::isnan(y.flat_get(1)));  // negative base, non-integer exponent
    EXPECT_EQ(y.flat_get(2), 1);             // 0^0
    EXPECT_NEAR(y.flat_get(3), 2, 1e-6);
    EXPECT_EQ(y.flat_get(4), 1);  // 1^NaN
  });
}

// Large same-shape f32 outputs take the non-temporal store path; a wrapped
// output that is not 64-byte aligned exercises its peeling.
TEST(BinaryOps, LargeMisalignedOutput) {
  const int64_t n = (int64_t{8} << 20) / 4 + 37;
  Tensor a = Tensor::empty({n}, DType::f32), b = Tensor::empty({n}, DType::f32);
  for (int64_t i = 0; i < n; ++i) {
    a.data_as<float>()[i] = static_cast<float>(i % 1000);
    b.data_as<float>()[i] = static_cast<float>(i % 7) * 0.5f;
  }
  Tensor buf = Tensor::zeros({n + 16}, DType::f32);
  for_each_kernel("sub", [&](const std::string& k) {
    if (k == "sub_ref_f64") return;  // too slow at this size
    Tensor y = Tensor::wrap(buf.data_as<float>() + 3, {n}, DType::f32);
    Op op = Op::create("sub", {a, b}, {}, k);
    op.run(std::vector<Tensor>{a, b}, std::span<Tensor>(&y, 1));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i)
      bad +=
          y.data_as<float>()[i] != static_cast<float>(i % 1000) - static_cast<float>(i % 7) * 0.5f;
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(buf.data_as<float>()[n + 3], 0.0f);  // nothing written past the end
    EXPECT_EQ(buf.data_as<float>()[2], 0.0f);
  });
}

TEST(GatedOps, ConventionsAndErrors) {
  // x = [first half | second half]
  Tensor x = Tensor::from<float>({1.5f, -0.5f, 2.0f, 3.0f}, {1, 4});
  auto silu = [](double v) { return v / (1 + std::exp(-v)); };
  auto gelu = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
  for_each_kernel("swiglu", [&](const std::string& k) {
    Tensor y = run_with("swiglu", {x}, {}, k)[0];  // gate first: silu(a) * b
    ASSERT_EQ(y.shape(), (Shape{1, 2}));
    EXPECT_NEAR(y.flat_get(0), silu(1.5) * 2.0, 1e-6);
    EXPECT_NEAR(y.flat_get(1), silu(-0.5) * 3.0, 1e-6);
  });
  for_each_kernel("geglu", [&](const std::string& k) {
    Tensor y = run_with("geglu", {x}, {}, k)[0];  // diffusers: hidden * gelu(gate), gate second
    EXPECT_NEAR(y.flat_get(0), 1.5 * gelu(2.0), 1e-6);
    EXPECT_NEAR(y.flat_get(1), -0.5 * gelu(3.0), 1e-6);
  });
  EXPECT_EQ(error_of([&] {
              Op::create("swiglu", {Tensor::zeros({2, 5}, DType::f32)});
            }),
            "swiglu: input 'x': expected an even last dimension (2H), got [2, 5]");
  EXPECT_EQ(error_of([&] {
              Op::create("geglu", {x}, {{"gate_first", int64_t{2}}});
            }),
            "geglu: attribute 'gate_first': expected 0 or 1, got 2");
  EXPECT_NE(
      error_of([&] { Op::create("swiglu", {Tensor::zeros({}, DType::f32)}); }).find("rank >= 1"),
      std::string::npos);
}

TEST(ReduceOps, RejectBadInputs) {
  Tensor x = Tensor::zeros({2, 3, 4}, DType::f32);
  EXPECT_EQ(error_of([&] {
              Op::create("sum", {x}, {{"axes", std::vector<int64_t>{3}}});
            }),
            "sum: attribute 'axes': expected an axis in [-3, 3), got 3");
  EXPECT_EQ(error_of([&] {
              Op::create("mean", {x}, {{"axes", std::vector<int64_t>{1, -2}}});
            }),
            "mean: attribute 'axes': expected distinct axes, got [1, -2]");
  EXPECT_EQ(error_of([&] {
              Op::create("max", {x}, {{"keepdims", int64_t{2}}});
            }),
            "max: attribute 'keepdims': expected 0 or 1, got 2");
  EXPECT_EQ(
      error_of([&] {
        Op::create("min", {Tensor::zeros({2, 0}, DType::f32)}, {{"axes", std::vector<int64_t>{1}}});
      }),
      "min: input 'x': expected a non-empty extent on reduced axis 1, got [2, 0]");
  EXPECT_EQ(error_of([&] {
              Op::create("argmax", {x}, {{"axis", int64_t{-4}}});
            }),
            "argmax: attribute 'axis': expected an axis in [-3, 3), got -4");
  EXPECT_EQ(error_of([&] {
              Op::create("argmax", {Tensor::zeros({0, 2}, DType::f32)});
            }),
            "argmax: input 'x': expected a non-empty extent on axis 0, got [0, 2]");
  EXPECT_EQ(error_of([&] { Op::create("sum", {Tensor::zeros({4}, DType::i64)}); }),
            "sum: input 'x': expected dtype f32, bf16 or f16, got i64");
  EXPECT_EQ(Op::create("sum", {x}, {{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", int64_t{0}}})
                .outputs()[0]
                .shape,
            (Shape{3}));
  EXPECT_EQ(Op::create("argmax", {x}, {{"axis", int64_t{1}}}).outputs()[0].dtype, DType::i64);
}

TEST(ReduceOps, NaNAndTies) {
  // 40 elements: lanes and the scalar tail both see NaN / ties.
  std::vector<float> v(40, 1.0f);
  v[5] = 7;
  v[33] = 7;  // tie: first index wins
  Tensor x = Tensor::empty({40}, DType::f32);
  std::copy(v.begin(), v.end(), x.data_as<float>());
  for_each_kernel("argmax", [&](const std::string& k) {
    EXPECT_EQ(run_with("argmax", {x}, {}, k)[0].flat_get(0), 5);
  });
  x.data_as<float>()[37] = NAN;
  x.data_as<float>()[21] = NAN;
  for_each_kernel("argmax", [&](const std::string& k) {
    EXPECT_EQ(run_with("argmax", {x}, {}, k)[0].flat_get(0), 21);
  });
  for_each_kernel("argmax", [&](const std::string& k) {  // along a kept-inner axis
    Tensor y = run_with("argmax", {x.reshape({4, 10})}, {{"axis", int64_t{0}}}, k)[0];
    EXPECT_EQ(y.flat_get(1), 2);  // column 1: 21 is NaN at row 2
    EXPECT_EQ(y.flat_get(5), 0);  // column 5: 7 at row 0
    EXPECT_EQ(y.flat_get(3), 3);  // column 3: 33 -> 7 at row 3
  });
  for (const char* op : {"max", "min", "sum"})
    for_each_kernel(op, [&](const std::string& k) {
      EXPECT_TRUE(std::isnan(run_with(op, {x}, {}, k)[0].flat_get(0)));
      Tensor y = run_with(op, {x.reshape({4, 10})}, {{"axes", std::vector<int64_t>{0}}}, k)[0];
      EXPECT_TRUE(std::isnan(y.flat_get(1)));
      EXPECT_FALSE(std::isnan(y.flat_get(0)));
    });
  for_each_kernel("mean", [&](const std::string& k) {  // empty reduction: NaN; sum: 0
    Tensor e = Tensor::zeros({3, 0}, DType::f32);
    Tensor y = run_with("mean", {e}, {{"axes", std::vector<int64_t>{1}}}, k)[0];
    ASSERT_EQ(y.shape(), (Shape{3, 1}));
    EXPECT_TRUE(std::isnan(y.flat_get(2)));
  });
}

}  // namespace
}  // namespace opsnn

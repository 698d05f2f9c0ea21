#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>

#include "opsnn/check.h"
#include "opsnn/listing.h"
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

TEST(Registry, HasBuiltinsWithReferenceLast) {
  const Registry& r = Registry::global();
  ASSERT_NE(r.find("gelu"), nullptr);
  const auto& ks = r.kernels("gelu");
  ASSERT_GE(ks.size(), 2u);
  EXPECT_EQ(ks.back().name, "gelu_ref_f64");
  for (size_t i = 1; i < ks.size(); ++i) EXPECT_GE(ks[i - 1].priority, ks[i].priority);
}

TEST(Op, ValidatesAttributesWithClearErrors) {
  Tensor x = Tensor::zeros({4}, DType::f32);
  EXPECT_EQ(error_of([&] {
              Op::create("gelu", {x}, {{"approx", std::string("tanh")}});
            }),
            "gelu: attribute 'approx': expected one of: approximate, got 'approx'");
  EXPECT_EQ(error_of([&] {
              Op::create("gelu", {x}, {{"approximate", int64_t{3}}});
            }),
            "gelu: attribute 'approximate': expected a value of type string, got another type");
  EXPECT_EQ(error_of([&] {
              Op::create("gelu", {x}, {{"approximate", std::string("fast")}});
            }),
            "gelu: attribute 'approximate': expected none|tanh, got 'fast'");
  EXPECT_EQ(error_of([&] { Op::create("gelu", std::vector<Tensor>{}); }),
            "gelu: inputs: expected 1 inputs, got 0");
  Tensor i = Tensor::zeros({4}, DType::i32);
  EXPECT_EQ(error_of([&] { Op::create("gelu", {i}); }),
            "gelu: input 'x': expected dtype f32, bf16 or f16, got i32");
  EXPECT_NE(error_of([&] { Op::create("no_such_op", {x}); }).find("no_such_op"), std::string::npos);
}

TEST(Op, TwoPhaseRunsWithoutReValidationAndChecksShapes) {
  Tensor x = Tensor::zeros({1000}, DType::f32);
  for (int64_t i = 0; i < 1000; ++i) x.flat_set(i, i * 0.01 - 5);
  Op op = Op::create("relu", {x.desc()});
  EXPECT_EQ(op.workspace_bytes(), 0u);
  Tensor y = Tensor::empty({1000}, DType::f32);
  for (int rep = 0; rep < 3; ++rep) op.run({&x, 1}, {&y, 1});
  EXPECT_EQ(y.flat_get(0), 0.0);
  EXPECT_FLOAT_EQ(static_cast<float>(y.flat_get(999)), 4.99f);
  Tensor wrong = Tensor::empty({999}, DType::f32);
  EXPECT_THROW(op.run({&x, 1}, {&wrong, 1}), Error);
}

// Issue 15: "Op op; op.run(...) on a default-constructed Op dereferences null".
TEST(Op, DefaultConstructedOrMovedFromOpThrowsInsteadOfCrashing) {
  Tensor x = Tensor::zeros({4}, DType::f32), y = Tensor::empty({4}, DType::f32);
  Op op;
  const std::string want =
      "Op: this: expected an Op made by Op::create, got a default-constructed or moved-from Op";
  EXPECT_EQ(error_of([&] { op.run({&x, 1}, {&y, 1}); }), want);
  EXPECT_EQ(error_of([&] { (void)op.outputs(); }), want);
  EXPECT_EQ(error_of([&] { (void)op({x}); }), want);
  Op made = Op::create("relu", {x.desc()});
  Op taken = std::move(made);
  EXPECT_EQ(error_of([&] {
              made.run({&x, 1}, {&y, 1});
            }),
            want);  // NOLINT(bugprone-use-after-move)
  EXPECT_NO_THROW(taken.run({&x, 1}, {&y, 1}));
}

// Issue 15: "run takes the workspace as a bare void*, so a too-small workspace
// cannot be detected".
TEST(Op, RunRefusesAWorkspaceThatIsTooSmallOrMisaligned) {
  Tensor base = Tensor::zeros({6, 4}, DType::f32);
  Tensor xt = base.permute({1, 0});
  Op op = Op::create("abs", {xt.desc()});
  const size_t need = op.workspace_bytes();
  ASSERT_GT(need, 0u);
  Arena arena(need + 2 * kAlignment);
  std::span<std::byte> ws = arena.span(need + kAlignment);
  Tensor y = Tensor::empty({4, 6}, DType::f32);
  EXPECT_EQ(error_of([&] {
              op.run({&xt, 1}, {&y, 1});
            }),
            "abs: workspace: expected at least " + std::to_string(need) + " bytes, got 0 bytes");
  EXPECT_EQ(error_of([&] {
              op.run({&xt, 1}, {&y, 1}, ws.first(need - 1));
            }),
            "abs: workspace: expected at least " + std::to_string(need) + " bytes, got " +
                std::to_string(need - 1) + " bytes");
  EXPECT_EQ(error_of([&] {
              op.run({&xt, 1}, {&y, 1}, ws.subspan(1, need));
            }),
            "abs: workspace: expected a 64-byte aligned address, got a misaligned one");
  EXPECT_NO_THROW(op.run({&xt, 1}, {&y, 1}, ws.first(need)));
}

TEST(Op, ConstantOperandIsSeenAtCreateAndMayBeOmittedAtRun) {
  Tensor a = Tensor::zeros({3, 4}, DType::f32), b = Tensor::zeros({3, 4}, DType::f32);
  for (int64_t i = 0; i < 12; ++i) {
    a.flat_set(i, i);
    b.flat_set(i, 100 - i);
  }
  TensorDesc bc = TensorDesc::constant(b);
  ASSERT_NE(bc.constant_value(), nullptr);
  EXPECT_EQ(bc.constant_value()->data(), b.data());  // shared, not copied
  EXPECT_EQ(bc.str(), "f32[3, 4] const");
  Op op = Op::create("add", {a.desc(), bc});
  EXPECT_EQ(op.call().constant(0), nullptr);
  ASSERT_NE(op.call().constant(1), nullptr);
  Tensor y = Tensor::empty({3, 4}, DType::f32);
  const Tensor none;
  std::vector<Tensor> ins{a, none};
  op.run(ins, {&y, 1});
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(y.flat_get(i), 100.0);
  op.run(std::vector<Tensor>{a, b}, {&y, 1});  // the constant itself is accepted too
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(y.flat_get(i), 100.0);
  // An ordinary input cannot be omitted.
  Op plain = Op::create("add", {a.desc(), b.desc()});
  EXPECT_EQ(error_of([&] {
              plain.run(ins, {&y, 1});
            }),
            "add: input 1: expected f32[3, 4], got no tensor");
  // A strided constant is stored contiguous.
  Tensor bt = b.permute({1, 0});
  TensorDesc btc = TensorDesc::constant(bt);
  EXPECT_TRUE(btc.is_contiguous());
  EXPECT_EQ(btc.constant_value()->get({1, 2}), bt.get({1, 2}));
}

TEST(Op, StridedInputIsPackedIntoTheWorkspace) {
  Tensor base = Tensor::zeros({6, 4}, DType::f32);
  for (int64_t i = 0; i < 24; ++i) base.flat_set(i, i - 12.0);
  Tensor xt = base.permute({1, 0});  // [4, 6], strided
  Op op = Op::create("abs", {xt.desc()});
  EXPECT_GE(op.workspace_bytes(), 24 * sizeof(float));
  auto y = op({xt});
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 6; ++c) EXPECT_EQ(y[0].get({r, c}), std::fabs(xt.get({r, c})));
}

TEST(Op, ForcedKernelAndDeclineReasons) {
  Tensor x = Tensor::zeros({10}, DType::f32);
  Op ref = Op::create("silu", {x}, {}, "silu_ref_f64");
  EXPECT_EQ(ref.kernel_name(), "silu_ref_f64");
  EXPECT_THROW(Op::create("silu", {x}, {}, "silu_nope"), Error);
  set_isa_cap(Isa::scalar);
  EXPECT_EQ(Op::create("silu", {x}).kernel_name(), "silu_scalar");
  set_isa_cap(Isa::avx512);
}

// A custom op's schema: one input x, one output y of x's shape and dtype.
OpSchema unary_test_schema(const std::string& name, std::vector<DType> dtypes) {
  OpSchema s;
  s.name = name;
  s.family = "custom";
  s.inputs = {{"x", ""}};
  s.outputs = {{"y", ""}};
  s.dtypes = std::move(dtypes);
  s.infer = [](const OpCall& c) {
    return std::vector<TensorDesc>{TensorDesc(c.in(0).dtype, c.in(0).shape)};
  };
  return s;
}

TEST(CustomOp, RegisteredOpIsDispatchedAndChecked) {
  Registry& r = Registry::global();
  if (!r.find("test_double")) {
    OpSchema s = unary_test_schema("test_double", {DType::f32});
    s.reference = [](const OpCall&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
      for (size_t i = 0; i < in[0].data.size(); ++i) out[0].data[i] = 2 * in[0].data[i];
    };
    s.cases = [](DType t) { return std::vector<CheckCase>{{"n5", {TensorDesc(t, {5})}, {}, {}}}; };
    r.add_op(s);
    KernelDesc k;
    k.name = "test_double_fast";
    k.priority = 5;
    k.dtypes = {DType::f32};
    k.create = simple_kernel(
        [](const OpCall&, const Tensor* in, Tensor* out, void*) {
          for (int64_t i = 0; i < in[0].numel(); ++i)
            out[0].data_as<float>()[i] = 2 * in[0].data_as<float>()[i];
        },
        [](const OpCall& c, std::string* why) {
          if (c.in(0).numel() > 100) {
            *why = "only up to 100 elements";
            return false;
          }
          return true;
        });
    r.add_kernel("test_double", k);
  }
  Tensor x = Tensor::zeros({5}, DType::f32);
  EXPECT_EQ(Op::create("test_double", {x}).kernel_name(), "test_double_fast");
  Tensor big = Tensor::zeros({500}, DType::f32);
  EXPECT_EQ(Op::create("test_double", {big}).kernel_name(), "test_double_ref_f64");
  for (const CaseResult& c : check_op("test_double", {})) EXPECT_TRUE(c.passed) << c.message;
  EXPECT_THROW(r.add_op(r.schema("test_double")), Error);
}

// KernelDesc::priority_for ranks a kernel per call from the input dtypes:
// Op::create tries the kernels in that order, the listing shows each dtype's
// pick, and a forced kernel is still taken whatever its rank.
TEST(CustomOp, PriorityForRanksKernelsByInputDtype) {
  Registry& r = Registry::global();
  if (!r.find("test_rank")) {
    OpSchema s = unary_test_schema("test_rank", {DType::f32, DType::bf16});
    s.reference = [](const OpCall&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
      out[0].data = in[0].data;
    };
    r.add_op(s);
    // "a" is registered first at the same base priority; "b" ranks above it
    // for bf16 inputs only.
    for (const char* name : {"test_rank_a", "test_rank_b"}) {
      KernelDesc k;
      k.name = name;
      k.priority = 5;
      k.dtypes = {DType::f32, DType::bf16};
      if (std::string(name) == "test_rank_b")
        k.priority_for = [](std::span<const DType> dt) {
          return !dt.empty() && dt[0] == DType::bf16 ? 6 : 5;
        };
      k.create = simple_kernel(
          [](const OpCall&, const Tensor* in, Tensor* out, void*) { copy_into(in[0], out[0]); },
          [](const OpCall&, std::string*) { return true; });
      r.add_kernel("test_rank", k);
    }
  }
  const Tensor xf = Tensor::zeros({4}, DType::f32), xb = Tensor::zeros({4}, DType::bf16);
  EXPECT_EQ(Op::create("test_rank", {xf}).kernel_name(), "test_rank_a");
  EXPECT_EQ(Op::create("test_rank", {xb}).kernel_name(), "test_rank_b");
  EXPECT_EQ(Op::create("test_rank", {xb}, {}, "test_rank_a").kernel_name(), "test_rank_a");
  const DType bf[] = {DType::bf16};
  const std::vector<const KernelDesc*> ranked = r.ranked("test_rank", bf);
  ASSERT_GE(ranked.size(), 3u);
  EXPECT_EQ(ranked[0]->name, "test_rank_b");
  EXPECT_EQ(ranked.back()->name, "test_rank_ref_f64");
  int listed = 0;
  for (const OpListing& o : list_ops()) {
    if (o.name != "test_rank") continue;
    const std::vector<std::pair<std::string, std::string>> want = {{"f32", "test_rank_a"},
                                                                   {"bf16", "test_rank_b"}};
    EXPECT_EQ(o.dispatch, want);
    ++listed;
  }
  EXPECT_EQ(listed, 1);
}

}  // namespace
}  // namespace opsnn

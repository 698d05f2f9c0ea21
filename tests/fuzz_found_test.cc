// Defects the op-API fuzz target (tests/fuzz/op_api_fuzz.cc) found, one test
// each, named after the defect.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

#include "opsnn/check.h"
#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

TEST(FuzzFound, SqueezeOfAScalarWithAnAxisIsAnError) {
  const TensorDesc scalar(DType::f32, {});
  EXPECT_THROW(Op::create("squeeze", {scalar}, {{"axes", std::vector<int64_t>{0}}}), Error);
  EXPECT_THROW(Op::create("squeeze", {scalar}, {{"axes", std::vector<int64_t>{-1}}}), Error);
  EXPECT_EQ(Op::create("squeeze", {scalar}).outputs()[0].rank(), 0);
}

// A pool or resize with an empty output built its index tables anyway:
// over [0, 3, 4, 2^31] that is 2^31 entries per dim (std::bad_alloc, or the
// OOM killer). Empty outputs now cost nothing at create and run.
TEST(FuzzFound, EmptyPoolAndResizeBuildNoTables) {
  const TensorDesc x(DType::f32, {0, 3, 4, int64_t{1} << 40});
  Op pool =
      Op::create("max_pool2d_with_indices", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}}});
  EXPECT_EQ(pool.outputs()[0].shape, (Shape{0, 3, 3, (int64_t{1} << 40) - 1}));
  Op resize = Op::create("resize", {x}, {{"scales", std::vector<double>{2, 2}}});
  std::vector<Tensor> out{Tensor::empty(resize.outputs()[0].shape, DType::f32)};
  resize.run(std::vector<Tensor>{Tensor::empty(x.shape, DType::f32)}, out);
}

// conv1d of f16 x with a bf16 weight computes at bf16 precision (the GEMM
// rounds x to bf16 for the bf16 dot products); the checker held it to the
// f16 output's tolerance. It now uses the coarsest float operand's.
TEST(FuzzFound, MixedDtypesAreCheckedAtTheCoarsestOperandsPrecision) {
  CheckCase c{"conv1d f16 x, bf16 w",
              {TensorDesc(DType::f16, {1, 8, 9}), TensorDesc(DType::bf16, {8, 1, 3})},
              {{"auto_pad", std::string("SAME_UPPER")}, {"group", int64_t{8}}},
              {},
              1.0,
              true};
  const std::vector<Tensor> ins = make_case_inputs(c, DType::f16, 99);
  Op op = Op::create("conv1d", ins, c.attrs);
  const std::vector<Tensor> outs = op(ins);
  const CaseResult r = compare_with_reference(op, ins, outs);
  EXPECT_TRUE(r.passed) << r.kernel << ": " << r.message;
}

// scatter_nd with reduction=mul on i8 wraps in the kernel (as integer
// arithmetic does); the float64 reference did not.
TEST(FuzzFound, ScatterNdIntegerReductionWrapsInTheReferenceToo) {
  Tensor x = Tensor::empty({4}, DType::i8), idx = Tensor::empty({2, 1}, DType::i64),
         upd = Tensor::empty({2}, DType::i8);
  for (int64_t i = 0; i < 4; ++i) x.flat_set(i, 100);
  idx.flat_set(0, 1);
  idx.flat_set(1, 1);
  upd.flat_set(0, 3);
  upd.flat_set(1, -7);
  const std::vector<Tensor> ins{x, idx, upd};
  Op op = Op::create("scatter_nd", ins, {{"reduction", std::string("mul")}});
  const std::vector<Tensor> outs = op(ins);
  EXPECT_EQ(outs[0].flat_get(1), static_cast<int8_t>(100 * 3 * -7));
  const CaseResult r = compare_with_reference(op, ins, outs);
  EXPECT_TRUE(r.passed) << r.message;
}

// The scalar vector layer converted NaN and out-of-range floats to int32
// with a plain cast (undefined behaviour; UBSan stopped log_softmax on a
// row holding NaN there). It now gives INT32_MIN, as cvtps2dq does.
TEST(FuzzFound, ScalarKernelsConvertNaNToIntegerWithoutUndefinedBehaviour) {
  for (const char* op : {"log_softmax", "softmax", "exp", "gelu", "silu"}) {
    Tensor x = Tensor::empty({3, 7}, DType::f32);
    for (int64_t i = 0; i < x.numel(); ++i)
      x.flat_set(i, i % 3 == 0 ? NAN : (i % 3 == 1 ? 3e38 : -3e38));
    Op o = Op::create(op, {x}, {}, std::string(op) + "_scalar");
    const std::vector<Tensor> outs = o({x});
    const CaseResult r = compare_with_reference(o, {x}, outs);
    EXPECT_TRUE(r.passed) << op << ": " << r.message;
  }
}

// The decode op form (M <= 16, B read in place, f32 A) needs no workspace;
// run_plan still offset the null workspace pointer to its scratch (UBSan:
// "applying non-zero offset to null pointer").
TEST(FuzzFound, DecodeMatmulRunsWithoutWorkspace) {
  Tensor a = Tensor::empty({1, 64}, DType::f32), b = Tensor::empty({64, 48}, DType::f32);
  for (int64_t i = 0; i < a.numel(); ++i) a.flat_set(i, 0.01 * static_cast<double>(i % 7));
  for (int64_t i = 0; i < b.numel(); ++i) b.flat_set(i, 0.02 * static_cast<double>(i % 5));
  Op op = Op::create("matmul", {a.desc(), b.desc()});
  ASSERT_EQ(op.workspace_bytes(), 0u);
  std::vector<Tensor> outs{Tensor::empty(op.outputs()[0].shape, DType::f32)};
  op.run(std::vector<Tensor>{a, b}, outs);
  const CaseResult r = compare_with_reference(op, {a, b}, outs);
  EXPECT_TRUE(r.passed) << r.message;
}

// The decode op form took a B with one column (or one row) and neither
// stride 1 as if the other stride were free too: matmul of [7, 15] by a 1-D
// B read with stride 2 used B's elements 0..14 instead of 0, 2, .., 28.
TEST(FuzzFound, DecodeMatmulKeepsTheStrideOfAOneColumnOrOneRowB) {
  for (DType dt : {DType::f32, DType::f16, DType::bf16}) {
    struct Case {
      Shape a, b_full;
      int64_t axis, step;
    };
    // [7,15] x [30][::2] (a vector), [7,8] x [24,1][::3], [5,1] x [1,27][:, ::3].
    for (const Case& c :
         {Case{{7, 15}, {30}, 0, 2}, Case{{7, 8}, {24, 1}, 0, 3}, Case{{5, 1}, {1, 27}, 1, 3}}) {
      Tensor a = Tensor::empty(c.a, dt), bf = Tensor::empty(c.b_full, dt);
      for (int64_t i = 0; i < a.numel(); ++i) a.flat_set(i, 0.25 * static_cast<double>(i % 9) - 1);
      for (int64_t i = 0; i < bf.numel(); ++i)
        bf.flat_set(i, 0.5 * static_cast<double>(i % 7) - 1.5);
      const Tensor b = bf.slice(c.axis, 0, bf.dim(c.axis), c.step);
      Op op = Op::create("matmul", {a.desc(), b.desc()});
      const std::vector<Tensor> outs = op({a, b});
      const CaseResult r = compare_with_reference(op, {a, b}, outs);
      EXPECT_TRUE(r.passed) << dtype_name(dt) << " " << shape_str(c.a) << " x " << b.desc().str()
                            << ": " << r.message;
    }
  }
}

// An empty tensor whose other dims multiply beyond int64 (topk over
// [3, 1000, 0, 0, INT64_MAX]) overflowed in contiguous_strides (UBSan).
// Such a shape is now refused (see ShapesWhoseNonZeroDimsOverflowAreRefused);
// contiguous_strides, which takes any shape, still saturates.
TEST(FuzzFound, EmptyTensorWithHugeDimsHasNoStrideOverflow) {
  const Shape s{3, 1000, 0, 0, INT64_MAX};
  const Strides st = contiguous_strides(s);
  EXPECT_EQ(st.back(), 1);
  EXPECT_THROW(Tensor::zeros(s, DType::f16), Error);
  const Shape ok{3, 1000, 0, 0, int64_t{1} << 40};
  Tensor t = Tensor::zeros(ok, DType::f16);
  EXPECT_EQ(t.numel(), 0);
  try {  // valid or refused with the op's error; never undefined behaviour
    Op op = Op::create("topk", {t.desc()}, {{"axis", int64_t{1}}, {"k", int64_t{33}}});
    (void)op({t});
  } catch (const Error&) {
  }
}

// A reduction whose reduced extent is empty but whose kept inner dim is not
// (prod over axes 0, 2, 3 of [0, 16, 5, 7, 7]) offset the null data pointer
// of the empty input (UBSan). It now writes the identity without reading x.
TEST(FuzzFound, ReductionOverAnEmptyExtentWithKeptInnerDims) {
  for (const char* op : {"prod", "sum", "mean"}) {  // (max refuses an empty extent)
    Tensor x = Tensor::zeros({0, 16, 5, 7, 7}, DType::f32);
    Op o = Op::create(op, {x}, {{"axes", std::vector<int64_t>{0, 2, 3}}, {"keepdims", int64_t{1}}});
    const std::vector<Tensor> outs = o({x});
    const CaseResult r = compare_with_reference(o, {x}, outs);
    EXPECT_TRUE(r.passed) << op << ": " << r.message;
  }
}

// The same overflow in the framework's rebinding of an op's output strides
// (relu of [2^62, 0, 2], now refused; [2^59, 0, 2] is the largest f32 shape
// of that form that is not).
TEST(FuzzFound, EmptyOutputWithHugeDimsHasNoStrideOverflow) {
  Tensor x = Tensor::zeros({int64_t{1} << 59, 0, 2}, DType::f32);
  const std::vector<Tensor> y = call("relu", {x});
  EXPECT_EQ(y[0].numel(), 0);
}

// topk's float64 reference sized its sort order by the axis length: over an
// empty f32[0, 2^63-1, 2^63-1] that is a vector of 2^63-1 entries
// (std::length_error out of the reference kernel). References are not run
// when every output is empty. (That shape is refused now; over [0, 2^30,
// 2^30] the order would take 8 GiB.)
TEST(FuzzFound, ReferenceOfAnEmptyOutputIsNotRun) {
  const int64_t big = int64_t{1} << 30;
  Tensor x = Tensor::empty({0, big, big}, DType::f32);
  Op o = Op::create("topk", {x}, {{"k", big / 2}}, "topk_ref_f64");
  std::vector<Tensor> outs;
  for (const TensorDesc& d : o.outputs()) outs.push_back(Tensor::empty(d.shape, d.dtype));
  o.run(std::vector<Tensor>{x}, outs);
  const CaseResult r = compare_with_reference(o, {x}, outs);
  EXPECT_TRUE(r.passed) << r.message;
}

// group_norm over f16[17, 0, 2^63-1, 5] multiplied its spatial dims
// (2^63-1 * 5) in shape inference (UBSan: signed overflow in
// channel_norms.cc): every partial product of the dims of an empty tensor
// could overflow. A shape whose non-zero dims multiply beyond int64 is now
// refused where shapes are checked, naming the op and the input.
TEST(FuzzFound, ShapesWhoseNonZeroDimsOverflowAreRefused) {
  const TensorDesc x(DType::f16, {17, 0, INT64_MAX, 5});
  try {
    Op::create("group_norm", {x}, {{"num_groups", int64_t{1}}});
    ADD_FAILURE() << "accepted " << x.str();
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "group_norm");
    EXPECT_NE(e.arg().find("'x'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Tensor::empty({0, int64_t{1} << 62, 2}, DType::f32), Error);
  EXPECT_EQ(Tensor::empty({0, int64_t{1} << 40, 2}, DType::f32).numel(), 0);
}

// max_pool2d_with_indices with dilations 2^62 computed the dilated kernel
// extent (k - 1) * d + 1 unchecked (UBSan: signed overflow in conv_geom.cc);
// the window geometry of conv, pool and conv_transpose2d now checks its
// arithmetic and names the attribute.
TEST(FuzzFound, WindowGeometryWithHugeAttributesIsAnError) {
  const TensorDesc x(DType::bf16, {1, 3, 11, 9});
  const int64_t big = int64_t{1} << 62;
  try {
    Op::create("max_pool2d_with_indices", {x},
               {{"kernel_shape", std::vector<int64_t>{3, 3}},
                {"dilations", std::vector<int64_t>{big, big}},
                {"pads", std::vector<int64_t>{2, 2, 1, 2}}});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.arg(), "attribute 'dilations'") << e.what();
  }
  EXPECT_THROW(Op::create("conv2d", {x, TensorDesc(DType::bf16, {4, 3, 3, 3})},
                          {{"dilations", std::vector<int64_t>{big, big}},
                           {"auto_pad", std::string("SAME_UPPER")}}),
               Error);
  EXPECT_THROW(Op::create("conv_transpose2d", {x, TensorDesc(DType::bf16, {3, 4, 3, 3})},
                          {{"strides", std::vector<int64_t>{big, big}}}),
               Error);
}

// sdpa with scale=1e300 (an f64 attribute) scaled its f32 scores by inf and
// returned NaN where the float64 reference gave finite values. A scale that
// is not finite in f32 is now refused, naming the attribute.
TEST(FuzzFound, SdpaScaleBeyondF32IsAnError) {
  const TensorDesc q(DType::bf16, {1, 4, 19, 32}), kv(DType::bf16, {1, 2, 45, 32});
  for (double scale : {1e300, -1e300, static_cast<double>(INFINITY), static_cast<double>(NAN)}) {
    try {
      Op::create("sdpa", {q, kv, kv}, {{"scale", scale}});
      ADD_FAILURE() << "accepted scale " << scale;
    } catch (const Error& e) {
      EXPECT_EQ(e.arg(), "attribute 'scale'") << e.what();
    }
  }
  EXPECT_NO_THROW(Op::create("sdpa", {q, kv, kv}, {{"scale", 0.125}}));
}

// sdpa with no query heads (q f32[1, 0, 3, 96], 300 keys) divided by its
// zero task count when planning the key splits (UBSan: division by zero).
TEST(FuzzFound, SdpaWithNoQueryHeadsRuns) {
  Tensor q = Tensor::zeros({1, 0, 3, 96}, DType::f32),
         kv = Tensor::zeros({1, 2, 300, 96}, DType::f32);
  Op o = Op::create("sdpa", {q, kv, kv}, {{"causal", int64_t{1}}, {"return_lse", int64_t{1}}});
  const std::vector<Tensor> outs = o({q, kv, kv});
  EXPECT_EQ(outs[0].numel(), 0);
}

// global_max_pool over f32[2, 5, 7, 2^31, 0] built its window tables over the
// 2^31 dim (a 4 GiB allocation; libFuzzer's out-of-memory) for an input with
// no element. Pooling over an empty spatial extent has no value: refused,
// naming the input; an empty batch or channel dim still gives an empty output.
TEST(FuzzFound, PoolOverAnEmptySpatialExtentIsAnError) {
  const TensorDesc x(DType::f32, {2, 5, 7, int64_t{1} << 31, 0});
  try {
    Op::create("global_max_pool", {x});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "global_max_pool");
    EXPECT_NE(e.arg().find("x"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Op::create("avg_pool2d", {TensorDesc(DType::f32, {1, 3, 0, 4})},
                          {{"kernel_shape", std::vector<int64_t>{1, 1}},
                           {"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
               Error);
  EXPECT_EQ(
      Op::create("global_avg_pool", {TensorDesc(DType::f32, {0, 3, 4, 4})}).outputs()[0].numel(),
      0);
}

// dequantize of u8[2^31, 3, 40, 0] looped over the 2^31 * 120 rows of an
// empty tensor (libFuzzer: timeout after 76 s). Op::run now returns at once
// when every output is empty.
TEST(FuzzFound, RunWithOnlyEmptyOutputsReturnsAtOnce) {
  Tensor x = Tensor::empty({int64_t{1} << 31, 3, 40, 0}, DType::u8);
  Tensor scale = Tensor::from<float>({0.5f, 0.25f, 2.0f}, {3});
  Tensor zp = Tensor::zeros({3}, DType::u8);
  Op o = Op::create("dequantize", {x, scale, zp}, {{"dtype", std::string("f16")}});
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Tensor> outs = o({x, scale, zp});
  EXPECT_EQ(outs[0].numel(), 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

// resize (tf_crop_and_resize, linear) with roi = {0.5, -3.4e38, -1, 0} put a
// sample coordinate at -2.4e39 and converted it to int64 (UBSan: outside the
// range of long). Coordinates are now clamped where every tap lies outside
// the input, and a roi that is not finite is refused.
TEST(FuzzFound, ResizeCoordinateFarOutsideTheInputIsClamped) {
  const Attrs attrs{{"mode", std::string("linear")},
                    {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                    {"extrapolation_value", 0.5},
                    {"roi", std::vector<double>{0.5, -3.4e38, -1, 0}},
                    {"sizes", std::vector<int64_t>{5, 6}}};
  CheckCase c{"resize huge roi", {TensorDesc(DType::f32, {1, 2, 8, 8})}, attrs, {}, 1.0, true};
  const std::vector<Tensor> ins = make_case_inputs(c, DType::f32, 7);
  Op op = Op::create("resize", ins, attrs);
  const std::vector<Tensor> outs = op(ins);
  const CaseResult r = compare_with_reference(op, ins, outs);
  EXPECT_TRUE(r.passed) << r.kernel << ": " << r.message;
  EXPECT_EQ(outs[0].flat_get(0), 0.5);  // w = -2.4e39 lies outside: the extrapolation value

  Attrs nan_roi = attrs;
  nan_roi.set("roi", std::vector<double>{0, 0, NAN, 1});
  EXPECT_THROW(Op::create("resize", ins, nan_roi), Error);
}

}  // namespace
}  // namespace opsnn

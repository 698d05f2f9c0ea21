// conv family: rejected shapes and attributes (opsnn::Error naming op and
// argument), constant weights packed at create giving the same bits as
// weights passed per call, and exact values of resize and pooling that the
// float64 case tables cannot pin down (the coordinate conventions, NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "opsnn/check.h"
#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

using IL = std::vector<int64_t>;
using FL = std::vector<double>;

// Op::create must fail with an opsnn::Error whose text names `op` and `arg`.
void expect_error(const std::string& op, const std::vector<TensorDesc>& in, const Attrs& attrs,
                  const std::string& arg) {
  try {
    (void)Op::create(op, in, attrs);
    ADD_FAILURE() << op << " accepted " << attrs.str() << " (expected an error about " << arg
                  << ")";
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find(op), std::string::npos) << w;
    EXPECT_NE(w.find(arg), std::string::npos) << w;
  }
}

TEST(Conv, RejectsBadShapesAndAttributes) {
  const TensorDesc x(DType::f32, {1, 4, 5, 5}), w3(DType::f32, {6, 4, 3, 3});
  expect_error("conv2d", {x, TensorDesc(DType::f32, {6, 4, 7, 7})}, {}, "kernel");
  expect_error("conv2d", {x, TensorDesc(DType::f32, {6, 2, 3, 3})}, {{"group", int64_t{3}}},
               "group");
  expect_error("conv2d", {x, TensorDesc(DType::f32, {5, 2, 3, 3})}, {{"group", int64_t{2}}},
               "group");
  expect_error("conv2d", {x, w3}, {{"pads", IL{-1, 0, 0, 0}}}, "pads");
  expect_error("conv2d", {x, w3}, {{"pads", IL{1, 1}}}, "pads");
  expect_error("conv2d", {x, w3}, {{"strides", IL{0, 1}}}, "strides");
  expect_error("conv2d", {x, w3},
               {{"auto_pad", std::string("SAME_UPPER")}, {"pads", IL{1, 1, 1, 1}}}, "pads");
  expect_error("conv2d", {x, w3}, {{"layout", std::string("NCWH")}}, "layout");
  expect_error("conv2d", {x, w3}, {{"activation", std::string("tanh")}}, "activation");
  expect_error("conv2d", {x, TensorDesc(DType::f32, {6, 3, 3, 3})}, {}, "w");
  expect_error("conv2d", {x, w3, TensorDesc(DType::f32, {5})}, {}, "bias");
  expect_error("conv_transpose2d", {x, TensorDesc(DType::f32, {4, 2, 3, 3})},
               {{"pads", IL{4, 4, 4, 4}}}, "output size");
  expect_error("conv_transpose2d", {x, TensorDesc(DType::f32, {4, 2, 3, 3})},
               {{"output_shape", IL{40, 40}}}, "output_shape");
  expect_error("max_pool2d", {x}, {{"kernel_shape", IL{7, 7}}}, "kernel");
  expect_error("max_pool2d", {x}, {{"kernel_shape", IL{3, 3}}, {"pads", IL{3, 0, 0, 0}}}, "pads");
  expect_error("avg_pool2d", {x}, {{"kernel_shape", IL{3}}}, "kernel_shape");
  expect_error("adaptive_avg_pool2d", {x}, {{"output_size", IL{0, 2}}}, "output_size");
  expect_error("resize", {x}, {{"scales", FL{0.1, 1.0}}}, "output size");
  expect_error("resize", {x}, {{"scales", FL{2, 2}}, {"sizes", IL{4, 4}}}, "sizes");
  expect_error("resize", {x}, {{"scales", FL{2, 2}}, {"mode", std::string("area")}}, "mode");
}

Tensor ramp(const Shape& s, DType t, double scale) {
  Tensor a = Tensor::empty(s, t);
  for (int64_t i = 0; i < a.numel(); ++i) a.flat_set(i, std::sin(static_cast<double>(i) * scale));
  return a;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// A constant weight (packed at create, passed as Tensor() at run) gives the
// same bits as the weight passed per call (packed into the workspace).
TEST(Conv, ConstantWeightMatchesPerCallWeight) {
  for (DType t : {DType::f32, DType::bf16})
    for (const char* layout : {"NCHW", "NHWC"}) {
      const bool cl = std::string(layout) == "NHWC";
      Tensor x = ramp(cl ? Shape{2, 9, 9, 12} : Shape{2, 12, 9, 9}, t, 0.37);
      Tensor w = ramp({8, 6, 3, 3}, t, 0.11), b = ramp({8}, t, 0.5);
      const Attrs a{{"pads", IL{1, 1, 1, 1}},
                    {"group", int64_t{2}},
                    {"layout", std::string(layout)},
                    {"activation", std::string("silu")}};
      Op plain = Op::create("conv2d", {x, w, b}, a);
      Op packed = Op::create("conv2d", {x.desc(), TensorDesc::constant(w), b.desc()}, a);
      const std::vector<Tensor> y1 = plain({x, w, b});
      const std::vector<Tensor> y2 = packed({x, Tensor(), b});
      EXPECT_TRUE(same_bits(y1[0], y2[0])) << dtype_name(t) << " " << layout;
      EXPECT_LT(packed.workspace_bytes(), plain.workspace_bytes());

      Tensor wt = ramp({12, 4, 4, 4}, t, 0.21);
      const Attrs ta{
          {"strides", IL{2, 2}}, {"pads", IL{1, 1, 1, 1}}, {"layout", std::string(layout)}};
      Op tp = Op::create("conv_transpose2d", {x, wt}, ta);
      Op tc = Op::create("conv_transpose2d", {x.desc(), TensorDesc::constant(wt)}, ta);
      EXPECT_TRUE(same_bits(tp({x, wt})[0], tc({x, Tensor()})[0]))
          << dtype_name(t) << " " << layout;
      EXPECT_LT(tc.workspace_bytes(), tp.workspace_bytes());
    }
}

// The depthwise kernel: a residual that is the output itself (y += conv(x)
// in place) gives the bits of a separate residual, and a weight passed per
// call those of a constant one, in both layouts.
// A weight packed per call gives the bits of the constant weight; depthwise
// takes an in-place residual (y += conv(x)) with the bits of a separate one,
// dense convolutions (bf16: AMX tiles where the CPU has them) refuse it.
TEST(Conv, InPlaceResidualAndPerCallWeight) {
  for (int64_t groups : {int64_t{37}, int64_t{1}})
    for (DType t : {DType::f32, DType::bf16})
      for (const char* layout : {"NCHW", "NHWC"}) {
        const bool cl = std::string(layout) == "NHWC";
        const Shape xs = cl ? Shape{1, 9, 23, 37} : Shape{1, 37, 9, 23};
        Tensor x = ramp(xs, t, 0.37), w = ramp({37, 37 / groups, 3, 3}, t, 0.11),
               r = ramp(xs, t, 0.5);
        const Attrs a{{"pads", IL{1, 1, 1, 1}},
                      {"group", groups},
                      {"layout", std::string(layout)},
                      {"activation", std::string("relu")}};
        Op op = Op::create("conv2d",
                           {x.desc(), TensorDesc::constant(w), TensorDesc::none(), r.desc()}, a);
        Tensor ws = Tensor::empty({static_cast<int64_t>(op.workspace_bytes()) + 64}, DType::u8);
        const std::span<std::byte> wsp{static_cast<std::byte*>(ws.data()), ws.nbytes()};
        const std::string what =
            std::string(dtype_name(t)) + " " + layout + " groups " + std::to_string(groups);
        Tensor y1 = Tensor::empty(xs, t);
        std::vector<Tensor> in1{x, Tensor(), Tensor(), r}, out1{y1};
        op.run(in1, out1, wsp);
        Tensor y2 = Tensor::empty(xs, t);
        std::memcpy(y2.data(), r.data(), r.nbytes());
        std::vector<Tensor> in2{x, Tensor(), Tensor(), y2}, out2{y2};
        if (groups == 1) {
          EXPECT_THROW(op.run(in2, out2, wsp), Error) << what;
        } else {
          op.run(in2, out2, wsp);
          EXPECT_TRUE(same_bits(y1, y2)) << what;
        }
        Op per_call = Op::create("conv2d", {x.desc(), w.desc(), TensorDesc::none(), r.desc()}, a);
        EXPECT_TRUE(same_bits(per_call({x, w, Tensor(), r})[0], y1)) << what;
      }
}

// An output of 8 MiB or more, aligned, written straight into the caller's
// tensor is written with non-temporal stores (conv_engine.cc, as the
// GEMM's): the same bits as the ordinary stores into an output that is one
// element off alignment. f32 and bf16 (the AVX512_BF16 kernel's whole
// panels); few input channels (the stem: bias + SiLU through its staged
// rows, or bias alone from the registers) and 64 (the tile path, a
// residual).
TEST(Conv, LargeOutputsStreamWithTheBitsOfOrdinaryStores) {
  if (active_isa() == Isa::scalar) GTEST_SKIP() << "the direct kernels are AVX2's and AVX-512's";
  struct Case {
    int64_t cin;
    bool residual, silu;
  };
  for (const DType t : {DType::f32, DType::bf16})
    for (const Case c : {Case{4, false, true}, Case{4, false, false}, Case{64, true, true}}) {
      // bf16: 256x256 for an 8 MiB output.
      const int64_t hw = t == DType::f32 ? 192 : 256;
      const Shape xs{1, hw, hw, c.cin}, ys{1, hw, hw, 64};
      Tensor x = ramp(xs, t, 0.37), w = ramp({64, c.cin, 3, 3}, t, 0.11), b = ramp({64}, t, 0.5);
      Tensor r = c.residual ? ramp(ys, t, 0.23) : Tensor();
      Attrs a{{"pads", IL{1, 1, 1, 1}}, {"layout", std::string("NHWC")}};
      if (c.silu) a.set("activation", std::string("silu"));
      Op op = Op::create(
          "conv2d",
          {x.desc(), TensorDesc::constant(w), b.desc(), c.residual ? r.desc() : TensorDesc::none()},
          a);
      Tensor ws = Tensor::empty({static_cast<int64_t>(op.workspace_bytes()) + 64}, DType::u8);
      const std::span<std::byte> wsp{static_cast<std::byte*>(ws.data()), ws.nbytes()};
      Tensor aligned = Tensor::empty(ys, t);
      ASSERT_GE(aligned.nbytes(), size_t{8} << 20);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(aligned.data()) % 64, 0u);
      Tensor buf = Tensor::empty({aligned.numel() + 1}, t);
      Tensor off = Tensor::wrap(static_cast<char*>(buf.data()) + dtype_size(t), ys, t);
      for (Tensor* y : {&aligned, &off}) {
        std::vector<Tensor> in{x, Tensor(), b, r}, out{*y};
        op.run(in, out, wsp);
      }
      EXPECT_TRUE(same_bits(aligned, off))
          << dtype_name(t) << " cin " << c.cin << (c.silu ? " silu" : "");
    }
}

// At AVX2, 16-bit convolutions with 32+ input channels run the f32 direct
// kernel on f32 copies of x and y (conv_engine.cc): the bf16 result has the
// bits of the f32 convolution of the same values, rounded once. Strides,
// dilations and uneven pads; bias + SiLU.
TEST(Conv, WidenedBf16MatchesTheF32Convolution) {
  if (active_isa() != Isa::avx2) GTEST_SKIP() << "the widened path is AVX2's";
  struct Case {
    IL strides, dilations, pads;
  };
  const std::vector<Case> cases = {{{1, 1}, {1, 1}, {1, 1, 1, 1}},
                                   {{2, 2}, {1, 1}, {1, 0, 0, 1}},
                                   {{1, 1}, {2, 2}, {2, 1, 1, 2}}};
  Tensor x16 = ramp({1, 37, 29, 48}, DType::bf16, 0.37),
         w16 = ramp({40, 48, 3, 3}, DType::bf16, 0.11);
  Tensor b = ramp({40}, DType::f32, 0.5);
  Tensor x32 = Tensor::empty(x16.shape(), DType::f32), w32 = Tensor::empty(w16.shape(), DType::f32);
  copy_into(x16, x32);
  copy_into(w16, w32);
  for (const Case& c : cases) {
    const Attrs a{{"strides", c.strides},
                  {"dilations", c.dilations},
                  {"pads", c.pads},
                  {"layout", std::string("NHWC")},
                  {"activation", std::string("silu")}};
    Op op16 = Op::create("conv2d", {x16.desc(), TensorDesc::constant(w16), b.desc()}, a);
    Op op32 = Op::create("conv2d", {x32.desc(), TensorDesc::constant(w32), b.desc()}, a);
    const Tensor y16 = op16({x16, Tensor(), b})[0];
    const Tensor y32 = op32({x32, Tensor(), b})[0];
    Tensor want = Tensor::empty(y32.shape(), DType::bf16);
    copy_into(y32, want);
    EXPECT_TRUE(same_bits(y16, want)) << a.str();
  }
}

// The direct kernels (bf16 on AVX512_BF16, f32 on AVX-512) tile each
// output row of 8 or more pixels in near-equal tiles and skip the taps a
// tile's first or last pixel, or whole tile, reads only padding of (f32 at
// AVX2 too, on tiles across rows); an odd tile's last register row is
// skipped too. With 2 or 4 input channels (the stem) its runs path
// loads a tile's pixels row by row (tiles across two output rows, lanes in
// the padding). Row widths around the tile sizes (8, 9, 13, 15, 17, 29, 33,
// 64), pads even and uneven, strides, dilations, a 5x5 kernel, 40 output
// channels (a partial panel): within the float64 reference's tolerance, the
// same bits with 1 and 2 threads. Other CPUs run their own paths here.
TEST(Conv, RowTilesMatchTheReference) {
  const KernelDesc* ref = nullptr;
  for (const KernelDesc& k : Registry::global().kernels("conv2d"))
    if (k.name.find("_ref_") != std::string::npos) ref = &k;
  ASSERT_NE(ref, nullptr);
  struct Window {
    int64_t k;
    IL strides, dilations, pads;
  };
  const std::vector<Window> windows = {
      {3, {1, 1}, {1, 1}, {1, 1, 1, 1}}, {3, {1, 1}, {1, 1}, {0, 0, 0, 0}},
      {3, {1, 1}, {1, 1}, {0, 2, 1, 0}}, {3, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {3, {1, 1}, {2, 2}, {2, 2, 2, 2}}, {5, {1, 1}, {1, 1}, {2, 2, 2, 2}}};
  for (const DType dt : {DType::bf16, DType::f32})
    for (const int64_t cin : {40, 4, 2})
      for (const int64_t width : {8, 9, 13, 15, 17, 29, 33, 64})
        for (const Window& win : windows) {
          const Shape xs{1, 6, width, cin};
          const Tensor x = ramp(xs, dt, 0.37), w = ramp({40, cin, win.k, win.k}, dt, 0.11);
          const Tensor b = ramp({40}, dt, 0.5);
          const Attrs a{{"strides", win.strides},
                        {"dilations", win.dilations},
                        {"pads", win.pads},
                        {"layout", std::string("NHWC")}};
          const Tensor want =
              Op::create("conv2d", {x.desc(), w.desc(), b.desc()}, a, ref->name)({x, w, b})[0];
          Op fast = Op::create("conv2d", {x.desc(), TensorDesc::constant(w), b.desc()}, a);
          const Tensor got = fast({x, Tensor(), b})[0];
          // f32: sums of up to 1000 products near 1 that cancel to near 0 in
          // places, an absolute bound above the default's 1e-6.
          const Tolerance tol = dt == DType::f32 ? Tolerance{5e-5, 1e-5} : default_tolerance(dt);
          int bad = 0;
          for (int64_t i = 0; i < want.numel() && bad < 3; ++i) {
            const double e = want.flat_get(i), g = got.flat_get(i);
            if (!(std::abs(g - e) <= tol.atol + tol.rtol * std::abs(e))) {
              ADD_FAILURE() << dtype_name(dt) << " cin " << cin << " width " << width << " "
                            << a.str() << " at " << i << ": " << g << " vs " << e;
              ++bad;
            }
          }
          const int saved = num_threads();
          set_num_threads(saved == 1 ? 2 : 1);
          const Tensor other = fast({x, Tensor(), b})[0];
          set_num_threads(saved);
          EXPECT_TRUE(same_bits(got, other))
              << dtype_name(dt) << " cin " << cin << " width " << width << " " << a.str();
        }
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.flat_get(i));
  return v;
}

TEST(Resize, CoordinateConventions) {
  Tensor x = Tensor::from<float>({0.0f, 1.0f}, {1, 1, 2});
  auto run = [&](Attrs a) { return values(call("resize", {x}, a)[0]); };
  EXPECT_EQ(run({{"mode", std::string("linear")}, {"scales", FL{2}}}),
            (std::vector<double>{0, 0.25, 0.75, 1}));
  EXPECT_EQ(run({{"mode", std::string("linear")},
                 {"sizes", IL{3}},
                 {"coordinate_transformation_mode", std::string("align_corners")}}),
            (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(run({{"scales", FL{2}},
                 {"coordinate_transformation_mode", std::string("asymmetric")},
                 {"nearest_mode", std::string("floor")}}),
            (std::vector<double>{0, 0, 1, 1}));
  // half_pixel, x = (o + 0.5) / 1.5 - 0.5 = 0.5 at o = 1: ties.
  Tensor x3 = Tensor::from<float>({0.0f, 1.0f}, {1, 1, 2});
  EXPECT_EQ(
      values(call("resize", {x3},
                  {{"sizes", IL{3}}, {"nearest_mode", std::string("round_prefer_floor")}})[0]),
      (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(values(call("resize", {x3},
                        {{"sizes", IL{3}}, {"nearest_mode", std::string("round_prefer_ceil")}})[0]),
            (std::vector<double>{0, 1, 1}));
}

TEST(Pool, NaNPropagatesAndPadCounting) {
  Tensor x = Tensor::from<float>({1, NAN, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  const Attrs a{{"kernel_shape", IL{2, 2}}};
  const std::vector<Tensor> r = call("max_pool2d_with_indices", {x}, a);
  EXPECT_TRUE(std::isnan(r[0].flat_get(0)));
  EXPECT_TRUE(std::isnan(r[0].flat_get(1)));
  EXPECT_EQ(r[0].flat_get(3), 9);
  EXPECT_EQ(r[1].flat_get(0), 1);  // the NaN's index
  EXPECT_EQ(r[1].flat_get(3), 8);
  Tensor ones = Tensor::from<float>({1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 3, 3});
  const Attrs p{{"kernel_shape", IL{3, 3}}, {"pads", IL{1, 1, 1, 1}}};
  Attrs pi = p;
  pi.set("count_include_pad", int64_t{1});
  EXPECT_EQ(call("avg_pool2d", {ones}, p)[0].flat_get(0), 1);
  EXPECT_FLOAT_EQ(static_cast<float>(call("avg_pool2d", {ones}, pi)[0].flat_get(0)), 4.0f / 9.0f);
}

// Rows of many outputs take the gather-free window runs (stride 1 and 2 along
// W): a NaN anywhere in a window, first, middle or last tap, any input row,
// makes that output NaN and no other; every other output is the reference's.
TEST(Pool, NaNInWindowRunsPropagates) {
  for (const IL& strides : {IL{2, 2}, IL{1, 1}})
    for (int64_t ceil : {0, 1}) {
      Tensor x = ramp({1, 2, 5, 41}, DType::f32, 0.37);
      float* px = x.data_as<float>();
      for (const int64_t at : {int64_t{2 * 41 + 0}, int64_t{41 + 17}, int64_t{205 + 4 * 41 + 40},
                               int64_t{205 + 22}, int64_t{3 * 41 + 29}})
        px[at] = NAN;
      Attrs a{{"kernel_shape", IL{3, 3}}, {"strides", strides}, {"pads", IL{1, 1, 1, 1}}};
      a.set("ceil_mode", ceil);
      const KernelDesc* ref = nullptr;
      for (const KernelDesc& k : Registry::global().kernels("max_pool2d"))
        if (k.name.find("_ref_") != std::string::npos) ref = &k;
      ASSERT_NE(ref, nullptr);
      const Tensor want = Op::create("max_pool2d", {x.desc()}, a, ref->name)({x})[0];
      const Tensor got = call("max_pool2d", {x}, a)[0];
      ASSERT_EQ(got.shape(), want.shape());
      int nans = 0;
      for (int64_t i = 0; i < want.numel(); ++i) {
        const double w = want.flat_get(i), g = got.flat_get(i);
        nans += std::isnan(w);
        if (std::isnan(w))
          EXPECT_TRUE(std::isnan(g)) << a.str() << " at " << i;
        else
          EXPECT_EQ(g, w) << a.str() << " at " << i;
      }
      EXPECT_GT(nans, 10);
    }
}

// The paths a small case table does not reach: outputs of 8 MiB or more
// (streaming stores), rows wider than the kernels' 4096-float stack row (the
// per-element walk), f32 and bf16, both layouts: within the tolerance of the
// float64 reference kernel, the same bits with 1 and 2 threads.
void expect_matches_reference(const std::string& op, const Tensor& x, const Attrs& a) {
  const KernelDesc* ref = nullptr;
  for (const KernelDesc& k : Registry::global().kernels(op))
    if (k.name.find("_ref_") != std::string::npos) ref = &k;
  ASSERT_NE(ref, nullptr);
  const Tensor want = Op::create(op, {x.desc()}, a, ref->name)({x})[0];
  const Op fast = Op::create(op, {x.desc()}, a);
  const Tensor got = fast({x})[0];
  const Tolerance tol = default_tolerance(x.dtype());
  int bad = 0;
  for (int64_t i = 0; i < want.numel() && bad < 3; ++i) {
    const double e = want.flat_get(i), g = got.flat_get(i);
    if (!(std::abs(g - e) <= tol.atol + tol.rtol * std::abs(e))) {
      ADD_FAILURE() << op << " " << a.str() << " " << dtype_name(x.dtype()) << " at " << i << ": "
                    << g << " vs " << e;
      ++bad;
    }
  }
  const int saved = num_threads();
  set_num_threads(saved == 1 ? 2 : 1);
  const Tensor other = fast({x})[0];
  set_num_threads(saved);
  EXPECT_TRUE(same_bits(got, other)) << op << " " << a.str();
}

TEST(Resize, LargeOutputsAndWideRowsMatchTheReference) {
  for (DType t : {DType::f32, DType::bf16})
    for (const char* layout : {"NCHW", "NHWC"}) {
      const bool cl = std::string(layout) == "NHWC";
      // 16 MiB (f32) / 8 MiB (bf16) outputs: streamed.
      const Tensor x = ramp(cl ? Shape{1, 128, 128, 64} : Shape{1, 64, 128, 128}, t, 0.013);
      for (const char* mode : {"nearest", "linear"})
        expect_matches_reference(
            "resize", x,
            {{"mode", std::string(mode)}, {"scales", FL{2, 2}}, {"layout", std::string(layout)}});
      // Rows of 4500 inputs and 9000 outputs.
      const Tensor w = ramp(cl ? Shape{1, 3, 4500, 2} : Shape{1, 2, 3, 4500}, t, 0.07);
      expect_matches_reference(
          "resize", w,
          {{"mode", std::string("linear")}, {"scales", FL{2, 2}}, {"layout", std::string(layout)}});
      expect_matches_reference("max_pool2d", w,
                               {{"kernel_shape", IL{2, 3}},
                                {"strides", IL{1, 2}},
                                {"pads", IL{0, 1, 0, 1}},
                                {"layout", std::string(layout)}});
      expect_matches_reference(
          "avg_pool2d", w,
          {{"kernel_shape", IL{3, 2}}, {"pads", IL{1, 0, 1, 0}}, {"layout", std::string(layout)}});
    }
}

}  // namespace
}  // namespace opsnn

// Accuracy of the shared vector math (src/kernels/simd/vmath_body.inc) in ulps
// over the whole f32 range, for the ISA this process runs (ctest runs it under
// OPSNN_ISA=scalar|avx2|avx512), against a double reference (glibc's exp, log,
// erf, tanh in double: far below 0.01 f32 ulp of error).
//
// Error of a result y at input x: |y - ref(x)| / ulp(ref(x)), with ulp(v) the
// spacing of f32 numbers in the binade of v (2^(e-23) for |v| in [2^e, 2^(e+1)),
// e >= -126) and 2^-149 (the smallest denormal) for denormal or zero v. An
// infinite y counts as 2^128 (the first value f32 rounds to inf); NaN must
// match NaN exactly. A correctly rounded function scores <= 0.5.
//
// Inputs: every `stride`-th bit pattern of all 2^32 (61 for avx2/avx512, 183
// for scalar; both signs, denormals, inf and NaN included) plus every bit
// pattern (every 3rd for scalar) in the ranges where each function is
// delicate (overflow and denormal boundaries, the switch points between
// approximations, near 1 for log). OPSNN_VMATH_STRIDE=N overrides the stride;
// N=1 sweeps all 2^32 patterns (minutes per ISA; ctest label `slow`, see
// tests/CMakeLists.txt).
// The measured figures are in docs/vector_math.md.
#include "kernels/vmath/vmath.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "opsnn/cpu.h"
#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

using vmath::Fn;

// Upper bounds the test enforces (measured maxima rounded up a little; see
// docs/vector_math.md). A regression of the approximations fails here.
double ulp_bound(Fn f) {
  switch (f) {
    case Fn::exp:
      return 1.1;
    case Fn::log:
      return 1.0;
    case Fn::erf:
      return 1.5;
    case Fn::tanh:
      return 2.0;
    case Fn::sigmoid:
      return 2.0;
    case Fn::erf_fast:
      return 7.0;
    case Fn::exp_nonpos:
      return 5.5;
  }
  return 0;
}

double reference(Fn f, float xf) {
  const double x = xf;
  switch (f) {
    case Fn::exp:
    case Fn::exp_nonpos:
      return std::exp(x);
    case Fn::log:
      return std::log(x);
    case Fn::erf:
    case Fn::erf_fast:
      return std::erf(x);
    case Fn::tanh:
      return std::tanh(x);
    case Fn::sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
  }
  return 0;
}

double ulp_of(double v) {
  v = std::fabs(v);
  if (!(v >= 0x1p-126)) return 0x1p-149;  // denormal or zero
  int e = 0;
  std::frexp(v, &e);  // v = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0, std::min(e - 1, 127) - 23);
}

// Error of `got` in ulps of the reference; +inf for a NaN mismatch.
double ulp_error(float got, double ref) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0 : kInf;
  if (std::isinf(ref) && std::isinf(got)) return (ref > 0) == (got > 0) ? 0 : kInf;
  // Past FLT_MAX + ulp/2 a value rounds to inf in f32: count it as 2^128.
  constexpr double kOver = 0x1p128 - 0x1p103;
  const double g = std::isinf(got) ? std::copysign(0x1p128, got) : got;
  const double r = std::fabs(ref) >= kOver ? std::copysign(0x1p128, ref) : ref;
  return std::fabs(g - r) / ulp_of(r);
}

// exp_nonpos is defined for x <= 0 (and NaN) only.
bool in_domain(Fn f, float x) { return f != Fn::exp_nonpos || !(x > 0.0f); }

struct Worst {
  double ulp = 0;
  float x = 0, got = 0;
  double ref = 0;
  uint64_t points = 0;
  void add(const Worst& o) {
    if (o.ulp > ulp || (std::isnan(o.ulp) && !std::isnan(ulp))) {
      const uint64_t p = points;
      *this = o;
      points = p;
    }
    points += o.points;
  }
};

class Sweeper {
 public:
  Sweeper(Fn f, vmath::ArrayFn fn) : f_(f), fn_(fn) { x_.reserve(kChunk); }
  void push(uint32_t bits) {
    x_.push_back(std::bit_cast<float>(bits));
    if (x_.size() == kChunk) flush();
  }
  Worst finish() {
    flush();
    return worst_;
  }

 private:
  static constexpr size_t kChunk = 1 << 16;
  void flush() {
    if (x_.empty()) return;
    y_.resize(x_.size());
    fn_(f_, x_.data(), y_.data(), static_cast<int64_t>(x_.size()));
    for (size_t i = 0; i < x_.size(); ++i) {
      if (!in_domain(f_, x_[i])) continue;
      ++worst_.points;
      const double ref = reference(f_, x_[i]);
      const double e = ulp_error(y_[i], ref);
      if (e > worst_.ulp) worst_ = Worst{e, x_[i], y_[i], ref, worst_.points};
    }
    x_.clear();
  }
  Fn f_;
  vmath::ArrayFn fn_;
  std::vector<float> x_, y_;
  Worst worst_;
};

uint32_t bits_of(float x) { return std::bit_cast<uint32_t>(x); }

// Every step-th bit pattern from lo to hi (same sign).
void sweep_range(Sweeper& s, float lo, float hi, uint64_t step) {
  uint32_t a = bits_of(lo), b = bits_of(hi);
  if (a > b) std::swap(a, b);
  for (uint64_t u = a; u <= b; u += step) s.push(static_cast<uint32_t>(u));
}

struct Range {
  float lo, hi;
};

// Where each function is delicate: every bit pattern in these is tested.
std::vector<Range> dense_ranges(Fn f) {
  switch (f) {
    case Fn::exp:  // denormal and zero results; overflow; reduction near 0
      return {{-110.0f, -87.0f}, {87.0f, 89.0f}, {-0.5f, -0.25f}, {0.25f, 0.5f}};
    case Fn::log:  // near 1 (cancellation), denormal inputs, FLT_MAX
      return {{0.5f, 2.0f}, {0x1p-149f, 0x1p-126f}, {0x1p126f, 3.4028235e38f}};
    case Fn::erf:  // polynomial / tail switch, tail up to where erf rounds to 1
    case Fn::erf_fast:
      return {{0.5f, 4.0f}, {-4.0f, -0.5f}, {0x1p-14f, 0x1p-12f}};
    case Fn::tanh:  // polynomial / exp switch, saturation
      return {{0.25f, 1.0f}, {-1.0f, -0.25f}, {8.0f, 10.0f}};
    case Fn::exp_nonpos:  // denormal and zero results; reduction near 0
      return {{-110.0f, -80.0f}, {-0.5f, -0.25f}};
    case Fn::sigmoid:  // denormal results for large negative x; both sides of 0
      return {{-110.0f, -80.0f}, {-2.0f, -0.5f}, {0.5f, 2.0f}, {16.0f, 18.0f}};
  }
  return {};
}

#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kSanitizerFactor = 4;  // the sanitizer build checks memory, not coverage
#else
constexpr uint64_t kSanitizerFactor = 1;
#endif

// Every stride-th pattern of the whole range; every dense_step-th one in the
// delicate ranges. The scalar path is 3x sparser: it costs ~3x more per value
// and SameBitsAsScalar shows the vector paths compute the same bits.
struct Sampling {
  uint64_t stride = 61, dense_step = 1;
};

Sampling sampling(Isa isa) {
  Sampling s;
  if (isa == Isa::scalar) s = {183, 3};
  s.stride *= kSanitizerFactor;
  s.dense_step *= kSanitizerFactor;
  const char* e = std::getenv("OPSNN_VMATH_STRIDE");
  if (e && *e) {
    const long long v = std::atoll(e);
    if (v >= 1) s = {static_cast<uint64_t>(v), 1};
  }
  return s;
}

std::string fmt_float(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

TEST(VMath, UlpErrorOverF32Range) {
  const Isa isa = active_isa();
  const vmath::ArrayFn fn = vmath::array_fn(isa);
  const Sampling smp = sampling(isa);
  const uint64_t stride = smp.stride;
  std::printf(
      "vmath accuracy, isa %s, every %llu-th f32 bit pattern + every %llu-th in dense ranges\n",
      isa_name(isa), static_cast<unsigned long long>(stride),
      static_cast<unsigned long long>(smp.dense_step));
  std::printf("  %-8s %10s %10s %16s %16s %16s %12s\n", "fn", "max_ulp", "bound", "worst_x", "got",
              "ref", "points");
  for (Fn f : vmath::kAllFns) {
    Sweeper all(f, fn);
    // An odd offset so the pattern does not sit on round bit patterns only.
    for (uint64_t u = stride > 1 ? 7 : 0; u < (uint64_t{1} << 32); u += stride)
      all.push(static_cast<uint32_t>(u));
    Worst w = all.finish();
    if (stride > 1) {
      for (const Range& r : dense_ranges(f)) {
        Sweeper d(f, fn);
        sweep_range(d, r.lo, r.hi, smp.dense_step);
        w.add(d.finish());
      }
    }
    std::printf("  %-8s %10.3f %10.2f %16s %16s %16s %12llu\n", vmath::fn_name(f), w.ulp,
                ulp_bound(f), fmt_float(w.x).c_str(), fmt_float(w.got).c_str(),
                fmt_float(w.ref).c_str(), static_cast<unsigned long long>(w.points));
    EXPECT_LE(w.ulp, ulp_bound(f))
        << vmath::fn_name(f) << " on " << isa_name(isa) << ": worst at x = " << fmt_float(w.x)
        << " got " << fmt_float(w.got) << " ref " << fmt_float(w.ref);
  }
  std::fflush(stdout);
}

float eval(Fn f, float x) {
  float y = 0;
  vmath::array_fn(active_isa())(f, &x, &y, 1);
  return y;
}

bool same_bits(float a, float b) { return bits_of(a) == bits_of(b); }

TEST(VMath, SpecialValues) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const float nans[] = {std::numeric_limits<float>::quiet_NaN(),
                        -std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7f800001u),
                        std::bit_cast<float>(0xffc12345u)};
  for (Fn f : vmath::kAllFns)
    for (float n : nans) EXPECT_TRUE(std::isnan(eval(f, n))) << vmath::fn_name(f) << "(NaN)";

  // exp: overflow exactly past log(FLT_MAX), the last denormal, zero below it.
  EXPECT_EQ(eval(Fn::exp, inf), inf);
  EXPECT_TRUE(same_bits(eval(Fn::exp, -inf), 0.0f));
  EXPECT_EQ(eval(Fn::exp, 0.0f), 1.0f);
  EXPECT_EQ(eval(Fn::exp, -0.0f), 1.0f);
  const float ln_max = 88.7228317f;  // the largest float below log(FLT_MAX) = 88.7228390520...
  EXPECT_TRUE(std::isfinite(eval(Fn::exp, ln_max)));
  EXPECT_EQ(eval(Fn::exp, std::nextafter(ln_max, inf)), inf);
  EXPECT_EQ(eval(Fn::exp, 1e30f), inf);
  EXPECT_EQ(eval(Fn::exp, -103.0f), static_cast<float>(std::exp(-103.0)));  // a denormal
  EXPECT_TRUE(same_bits(eval(Fn::exp, -104.0f), 0.0f));
  EXPECT_TRUE(same_bits(eval(Fn::exp, -1e30f), 0.0f));

  // log: log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf, log(1) = +0.
  EXPECT_EQ(eval(Fn::log, 0.0f), -inf);
  EXPECT_EQ(eval(Fn::log, -0.0f), -inf);
  EXPECT_TRUE(std::isnan(eval(Fn::log, -1.0f)));
  EXPECT_TRUE(std::isnan(eval(Fn::log, -inf)));
  EXPECT_TRUE(std::isnan(eval(Fn::log, -0x1p-149f)));
  EXPECT_EQ(eval(Fn::log, inf), inf);
  EXPECT_TRUE(same_bits(eval(Fn::log, 1.0f), 0.0f));
  EXPECT_EQ(eval(Fn::log, 0x1p-149f), static_cast<float>(std::log(0x1p-149)));

  // Odd functions keep the sign of zero and saturate at +-1.
  for (Fn f : {Fn::erf, Fn::tanh}) {
    EXPECT_TRUE(same_bits(eval(f, 0.0f), 0.0f)) << vmath::fn_name(f);
    EXPECT_TRUE(same_bits(eval(f, -0.0f), -0.0f)) << vmath::fn_name(f);
    EXPECT_EQ(eval(f, inf), 1.0f) << vmath::fn_name(f);
    EXPECT_EQ(eval(f, -inf), -1.0f) << vmath::fn_name(f);
    EXPECT_EQ(eval(f, 1e30f), 1.0f) << vmath::fn_name(f);
    EXPECT_EQ(eval(f, -1e30f), -1.0f) << vmath::fn_name(f);
    EXPECT_EQ(eval(f, 0x1p-149f), static_cast<float>(reference(f, 0x1p-149f))) << vmath::fn_name(f);
    EXPECT_EQ(eval(f, -0x1p-140f), static_cast<float>(reference(f, -0x1p-140f)))
        << vmath::fn_name(f);
  }

  // erf_fast: odd, keeps -0, saturates within its error bound.
  EXPECT_TRUE(same_bits(eval(Fn::erf_fast, -0.0f), -0.0f));
  EXPECT_TRUE(same_bits(eval(Fn::erf_fast, 0.0f), 0.0f));
  EXPECT_NEAR(eval(Fn::erf_fast, inf), 1.0f, 7 * 0x1p-24);
  EXPECT_NEAR(eval(Fn::erf_fast, -1e30f), -1.0f, 7 * 0x1p-24);

  // sigmoid: 1 at +inf, +0 at -inf, 1/2 at +-0, denormal (not 0) before underflow.
  EXPECT_EQ(eval(Fn::sigmoid, inf), 1.0f);
  EXPECT_TRUE(same_bits(eval(Fn::sigmoid, -inf), 0.0f));
  EXPECT_EQ(eval(Fn::sigmoid, 0.0f), 0.5f);
  EXPECT_EQ(eval(Fn::sigmoid, -0.0f), 0.5f);
  EXPECT_EQ(eval(Fn::sigmoid, -100.0f), static_cast<float>(reference(Fn::sigmoid, -100.0f)));
  EXPECT_GT(eval(Fn::sigmoid, -100.0f), 0.0f);
  EXPECT_TRUE(same_bits(eval(Fn::sigmoid, -1e30f), 0.0f));
}

// Every ISA computes the same bits as the scalar path (same operations, same
// order, FMAs everywhere), so results do not depend on the machine.
TEST(VMath, SameBitsAsScalar) {
  const Isa isa = active_isa();
  if (isa == Isa::scalar) GTEST_SKIP() << "active ISA is scalar";
  const vmath::ArrayFn vec = vmath::array_fn(isa), sca = vmath::array_fn(Isa::scalar);
  std::vector<float> x;
  for (uint64_t u = 3; u < (uint64_t{1} << 32); u += 4099)
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(u)));
  for (int i = -200000; i <= 200000; ++i) x.push_back(static_cast<float>(i) * 1e-3f);
  std::vector<float> a(x.size()), b(x.size());
  for (Fn f : vmath::kAllFns) {
    vec(f, x.data(), a.data(), static_cast<int64_t>(x.size()));
    sca(f, x.data(), b.data(), static_cast<int64_t>(x.size()));
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!in_domain(f, x[i])) continue;
      const bool same = same_bits(a[i], b[i]) || (std::isnan(a[i]) && std::isnan(b[i]));
      if (!same && bad++ == 0) first = i;
    }
    EXPECT_EQ(bad, 0u) << vmath::fn_name(f) << ": " << bad
                       << " results differ from scalar, first at x = " << fmt_float(x[first])
                       << ": " << fmt_float(a[first]) << " vs " << fmt_float(b[first]);
  }
}

// Unary outputs of >= 16 MiB are written with non-temporal stores (a
// different loop than the case tables reach): they must give the same bits as
// the same op run on small slices, which the case tables check against the
// float64 reference.
TEST(UnaryStreaming, LargeOutputMatchesSmallSlices) {
  const int64_t n = (int64_t{16} << 20) / 4 + 37;
  const int64_t slice = 65536 + 16;
  Tensor x = Tensor::empty({n}, DType::f32);
  float* xp = x.data_as<float>();
  for (int64_t i = 0; i < n; ++i)
    xp[i] = static_cast<float>((i * 2654435761u) % 2000003) * 6e-6f - 6.0f;
  for (const char* op : {"gelu", "silu", "exp", "relu"}) {
    Tensor y = Tensor::zeros({n}, DType::f32);
    Op::create(op, {x.desc()}).run({&x, 1}, {&y, 1});
    size_t bad = 0;
    for (int64_t b = 0; b < n; b += slice) {
      const int64_t m = std::min(slice, n - b);
      Tensor xs = Tensor::wrap(xp + b, {m}, DType::f32);
      Tensor ys = Tensor::zeros({m}, DType::f32);
      Op::create(op, {xs.desc()}).run({&xs, 1}, {&ys, 1});
      bad += static_cast<size_t>(
          std::memcmp(ys.data(), y.data_as<float>() + b, static_cast<size_t>(m) * 4) != 0);
    }
    EXPECT_EQ(bad, 0u) << op << ": slices differ from the large (streaming) run";
  }
}

}  // namespace
}  // namespace opsnn

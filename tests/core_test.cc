#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

TEST(DType, Bf16RoundsToNearestEven) {
  // 1 + 2^-8 is exactly halfway between two bf16 values: ties to even (1.0).
  EXPECT_EQ(to_bf16(1.0f + std::ldexp(1.0f, -8)).bits, to_bf16(1.0f).bits);
  // 1 + 3*2^-8 is halfway, rounds up to the even mantissa.
  EXPECT_EQ(to_f32(to_bf16(1.0f + 3 * std::ldexp(1.0f, -8))), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(to_f32(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(to_f32(to_bf16(std::numeric_limits<float>::infinity()))));
}

TEST(DType, F16RoundTripsAndRounds) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_bits_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(f32_to_f16_bits(f), h);
  }
  EXPECT_EQ(to_f32(to_f16(65520.0f)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_f32(to_f16(1.0f + std::ldexp(1.0f, -11))), 1.0f);  // tie to even
  EXPECT_EQ(to_f32(to_f16(std::ldexp(1.0f, -25))), 0.0f);         // tie to even (0)
  EXPECT_EQ(to_f32(to_f16(std::ldexp(1.5f, -25))), std::ldexp(1.0f, -24));
}

TEST(DType, VectorConversionMatchesScalar) {
  std::vector<float> src(1037);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = std::ldexp(static_cast<float>(i) - 500.3f, static_cast<int>(i % 40) - 20);
  src[3] = std::numeric_limits<float>::quiet_NaN();
  src[4] = std::numeric_limits<float>::infinity();
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (isa > cpu_info().best_isa()) continue;
    set_isa_cap(isa);
    std::vector<bf16> b(src.size());
    std::vector<f16> h(src.size());
    convert_f32_to_bf16(src.data(), b.data(), src.size());
    convert_f32_to_f16(src.data(), h.data(), src.size());
    std::vector<float> back(src.size());
    for (size_t i = 0; i < src.size(); ++i) {
      EXPECT_EQ(b[i].bits, to_bf16(src[i]).bits) << isa_name(isa) << " i=" << i;
      if (!std::isnan(src[i])) {
        EXPECT_EQ(h[i].bits, to_f16(src[i]).bits) << isa_name(isa) << " i=" << i;
      }
    }
    convert_bf16_to_f32(b.data(), back.data(), src.size());
    for (size_t i = 0; i < src.size(); ++i)
      if (!std::isnan(src[i])) {
        EXPECT_EQ(back[i], to_f32(b[i]));
      }
    convert_f16_to_f32(h.data(), back.data(), src.size());
    for (size_t i = 0; i < src.size(); ++i)
      if (!std::isnan(src[i])) {
        EXPECT_EQ(back[i], to_f32(h[i]));
      }
  }
  set_isa_cap(Isa::avx512);
}

TEST(Tensor, ViewsShareStorage) {
  Tensor t = Tensor::zeros({2, 3, 4}, DType::f32);
  for (int64_t i = 0; i < t.numel(); ++i) t.flat_set(i, static_cast<double>(i));
  Tensor p = t.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_FALSE(p.is_contiguous());
  EXPECT_EQ(p.get({3, 1, 2}), t.get({1, 2, 3}));
  Tensor s = t.slice(2, -1, 0 - 5, 1);  // empty
  EXPECT_EQ(s.dim(2), 0);
  Tensor s2 = t.slice(2, 1, 4, 2);
  EXPECT_EQ(s2.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(s2.get({1, 1, 1}), t.get({1, 1, 3}));
  Tensor c = p.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.get({3, 1, 2}), 23.0);
  EXPECT_EQ(t.reshape({6, -1}).shape(), (Shape{6, 4}));
  EXPECT_THROW(t.reshape({5, -1}), Error);
  EXPECT_THROW(p.reshape({24}), Error);
}

TEST(Tensor, RejectsOverflowAndMisalignment) {
  EXPECT_THROW(Tensor::empty({int64_t{1} << 40, int64_t{1} << 40}, DType::f32), Error);
  EXPECT_THROW(Tensor::empty({-1}, DType::f32), Error);
  alignas(8) char buf[16];
  EXPECT_THROW(Tensor::wrap(buf + 1, {2}, DType::f32), Error);
  EXPECT_THROW(Tensor::wrap(nullptr, {2}, DType::f32), Error);
  EXPECT_NO_THROW(Tensor::wrap(buf + 4, {2}, DType::f32));
}

TEST(Error, NamesOpArgExpectedGot) {
  Error e("layer_norm", "input 'scale'", "shape [768]", "[512]");
  EXPECT_STREQ(e.what(), "layer_norm: input 'scale': expected shape [768], got [512]");
}

TEST(Arena, TracksCurrentAndPeak) {
  Arena a(1 << 20);
  void* p = a.allocate(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  a.allocate(1000);
  EXPECT_GE(a.current_bytes(), 1100u);
  const size_t peak = a.peak_bytes();
  a.reset();
  EXPECT_EQ(a.current_bytes(), 0u);
  EXPECT_EQ(a.peak_bytes(), peak);
  EXPECT_THROW(a.allocate(2 << 20), Error);
}

TEST(ThreadPool, CoversRangeOnceAndChunksOnGrain) {
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    std::vector<std::atomic<int>> hits(1000);
    parallel_for(1000, 64, [&](int64_t b, int64_t e) {
      EXPECT_EQ(b % 64, 0);
      EXPECT_TRUE(e % 64 == 0 || e == 1000);
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
  set_num_threads(2);
}

// Workers poll for spin_us after a job, then sleep: jobs posted in either
// state (and with no polling at all) run every task exactly once.
TEST(ThreadPool, SpinSettingAndSleepingWorkers) {
  const int64_t saved = spin_us();
  EXPECT_THROW(set_spin_us(-1), Error);
  for (int64_t us : {int64_t{0}, int64_t{50}, int64_t{1000}}) {
    set_spin_us(us);
    EXPECT_EQ(spin_us(), us);
    for (int gap_us : {0, 200}) {
      std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
      std::vector<std::atomic<int>> hits(64);
      parallel_tasks(64, [&](int64_t t) { hits[static_cast<size_t>(t)]++; });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1) << us << " " << gap_us;
    }
  }
  set_spin_us(saved);
}

TEST(Cpu, DetectsAndCaps) {
  const CpuInfo& c = cpu_info();
  EXPECT_GE(c.logical_cores, 1);
  set_isa_cap(Isa::scalar);
  EXPECT_EQ(active_isa(), Isa::scalar);
  EXPECT_FALSE(has_avx512_bf16());
  set_isa_cap(Isa::avx512);
  EXPECT_EQ(active_isa(), c.best_isa());
  EXPECT_THROW(isa_from_name("sse9"), Error);
}

// The bench helper reads every byte it is given: an unaligned start, a length
// that is neither a multiple of the vector loop nor of 4 bytes, several
// threads' chunks; its result is the XOR of the 32-bit words.
TEST(Bench, StreamReadCoversEveryByte) {
  std::vector<uint8_t> v((size_t{1} << 20) + 64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i * 131 + (i >> 9));
  for (size_t start : {size_t{0}, size_t{4}, size_t{12}})
    for (size_t bytes : {size_t{0}, size_t{3}, size_t{1000}, size_t{(1 << 20) + 7}}) {
      const uint8_t* p = v.data() + start;
      uint32_t want = 0;
      for (size_t i = 0; i < bytes; ++i) want ^= uint32_t{p[i]} << (8 * (i % 4));
      EXPECT_EQ(stream_read(p, bytes), want) << start << " " << bytes;
    }
}

TEST(Bench, TimingOfIsMinAndUpperMedian) {
  const Timing t = timing_of({3.0, 1.0, 4.0, 2.0});
  EXPECT_EQ(t.min_ms, 1.0);
  EXPECT_EQ(t.median_ms, 3.0);  // element n/2 of the sorted list
  EXPECT_EQ(t.repeats, 4);
  const Timing one = timing_of({5.0});
  EXPECT_EQ(one.min_ms, 5.0);
  EXPECT_EQ(one.median_ms, 5.0);
}

}  // namespace
}  // namespace opsnn

#include "profile/limits.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/cpu.h"
#include "opsnn/memory.h"

namespace opsnn {

namespace detail {
double fma_loop_scalar(int64_t iters) {
  float acc[8];
  for (int i = 0; i < 8; ++i) acc[i] = static_cast<float>(i);
  for (int64_t it = 0; it < iters; ++it)
    for (float& a : acc) a = std::fma(a, 0.999999f, 1e-7f);
  volatile float sink = acc[0] + acc[7];
  (void)sink;
  return static_cast<double>(iters) * 8 * 2;
}
}  // namespace detail

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
struct Buffer {
  void* p;
  explicit Buffer(size_t bytes) : p(aligned_alloc_bytes(bytes)) { std::memset(p, 1, bytes); }
  ~Buffer() { aligned_free(p); }
};
}  // namespace

Timing time_it(FunctionRef<void()> fn, int min_repeats, double min_seconds) {
  return time_interleaved({fn}, min_repeats, min_seconds)[0];
}

std::vector<Timing> time_interleaved(const std::vector<FunctionRef<void()>>& fns, int min_repeats,
                                     double min_seconds) {
  for (const auto& fn : fns) fn();
  std::vector<std::vector<double>> ms(fns.size());
  const auto start = Clock::now();
  int rounds = 0;
  while (rounds < min_repeats || seconds_since(start) < min_seconds) {
    for (size_t i = 0; i < fns.size(); ++i) {
      const auto t0 = Clock::now();
      fns[i]();
      ms[i].push_back(seconds_since(t0) * 1e3);
    }
    if (++rounds >= 100000) break;
  }
  std::vector<Timing> out;
  for (auto& m : ms) out.push_back(timing_of(std::move(m)));
  return out;
}

Timing timing_of(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return Timing{ms.front(), ms[ms.size() / 2], static_cast<int>(ms.size())};
}

// The best copy this machine does: memcpy (glibc picks its own stores; in
// 1 MiB pieces it uses ordinary stores, which read each destination line
// first) and a copy with non-temporal stores (no read-for-ownership), which is
// faster for buffers far larger than the caches. The figure is the faster of
// the two, so kernels that stream their outputs are compared with a copy that
// streams too.
double measure_copy_gbps(size_t bytes) {
  bytes = bytes / 4096 * 4096;
  Buffer src(bytes), dst(bytes);
  auto* s = static_cast<char*>(src.p);
  auto* d = static_cast<char*>(dst.p);
  const int64_t pages = static_cast<int64_t>(bytes / 4096);
  Timing t = time_it(
      [&] {
        parallel_for(pages, 256, [&](int64_t b, int64_t e) {
          std::memcpy(d + b * 4096, s + b * 4096, static_cast<size_t>(e - b) * 4096);
        });
      },
      10, 0.2);
  double best_ms = t.min_ms;
  const Isa isa = active_isa();
  if (isa != Isa::scalar) {
    Timing ts = time_it(
        [&] {
          parallel_for(pages, 256, [&](int64_t b, int64_t e) {
            auto* df = reinterpret_cast<float*>(d + b * 4096);
            const auto* sf = reinterpret_cast<const float*>(s + b * 4096);
            const size_t n = static_cast<size_t>(e - b) * 1024;
            if (isa == Isa::avx512)
              detail::stream_copy_avx512(df, sf, n);
            else
              detail::stream_copy_avx2(df, sf, n);
          });
        },
        10, 0.2);
    best_ms = std::min(best_ms, ts.min_ms);
  }
  return 2.0 * static_cast<double>(bytes) / (best_ms * 1e-3) / 1e9;
}

uint32_t stream_read(const void* p, size_t bytes) {
  const auto* w = static_cast<const uint32_t*>(p);
  const int64_t n = static_cast<int64_t>(bytes / 4);
  const Isa isa = active_isa();
  // XOR is order-free: each thread folds its range into one atomic word (no
  // per-call allocation on the timed path).
  std::atomic<uint32_t> acc{0};
  parallel_for(n, int64_t{1} << 16, [&](int64_t b, int64_t e) {
    uint32_t r = 0;
    if (isa == Isa::avx512)
      r = detail::read_words_avx512(w + b, static_cast<size_t>(e - b));
    else if (isa == Isa::avx2)
      r = detail::read_words_avx2(w + b, static_cast<size_t>(e - b));
    else
      for (int64_t i = b; i < e; ++i) r ^= w[i];
    acc.fetch_xor(r, std::memory_order_relaxed);
  });
  uint32_t total = acc.load(std::memory_order_relaxed);
  const auto* tail = static_cast<const uint8_t*>(p) + n * 4;
  for (size_t i = 0; i < bytes % 4; ++i) total ^= uint32_t{tail[i]} << (8 * i);
  return total;
}

double measure_read_gbps(size_t bytes) {
  bytes = bytes / 4096 * 4096;
  Buffer src(bytes);
  volatile uint32_t sink = 0;
  Timing t = time_it([&] { sink = stream_read(src.p, bytes); }, 5, 0.2);
  (void)sink;
  return static_cast<double>(bytes) / (t.min_ms * 1e-3) / 1e9;
}

double measure_fma_peak_gflops() {
  const Isa isa = active_isa();
  const int threads = num_threads();
  const int64_t iters = 2'000'000;
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<double> flops(static_cast<size_t>(threads));
    std::vector<Clock::time_point> begin(flops.size()), end(flops.size());
    std::atomic<int> started{0};
    parallel_tasks(threads, [&](int64_t t) {
      // Each thread runs one loop, all at once, timed from the barrier:
      // without it a worker that woke late (another library's threads
      // spinning) left the caller to run both loops in turn, and the probe
      // read half the peak.
      started.fetch_add(1);
      const auto w0 = Clock::now();
      while (started.load() < threads && seconds_since(w0) < 0.5) {
      }
      const auto i = static_cast<size_t>(t);
      begin[i] = Clock::now();
      flops[i] = isa == Isa::avx512 ? detail::fma_loop_avx512(iters)
                 : isa == Isa::avx2 ? detail::fma_loop_avx2(iters)
                                    : detail::fma_loop_scalar(iters / 8);
      end[i] = Clock::now();
    });
    const double s = std::chrono::duration<double>(*std::max_element(end.begin(), end.end()) -
                                                   *std::min_element(begin.begin(), begin.end()))
                         .count();
    double total = 0;
    for (double f : flops) total += f;
    best = std::max(best, total / s / 1e9);
  }
  return best;
}

}  // namespace opsnn

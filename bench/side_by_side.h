// Interleaved side-by-side timing for the peer benchmarks (ours, oneDNN,
// OpenBLAS, ... in one process).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "opsnn/bench.h"

namespace opsnn::bench {

struct Stat {
  double min_ms = 0, med_ms = 0;
};

// Interleaved timing: each round runs every contender once, so all see the
// same load on this shared machine. Before each call the machine is left idle
// for that contender's predecessor's `gap_ms`: OpenBLAS's pthread workers keep
// spinning (sched_yield) for up to 2^28 TSC ticks (~0.1 s) after a call
// returns, and oneDNN's OpenMP workers for milliseconds; on this 2-core
// machine that spinning would otherwise steal a core from whichever contender
// runs next. With the gaps every contender starts from a machine that no
// other library's threads are spinning on, as it would in a process that only
// runs that library. The calling thread busy-waits through a gap (sleeping
// lets the idle vCPUs of this VM be descheduled, and the wake-up latency then
// lands in the next call: min/median spread 2x); OPSNN_PEER_SLEEP=1 sleeps
// instead. OPSNN_PEER_GAP_MS scales all gaps (default 20 ms after ours and
// oneDNN, 150 ms after OpenBLAS).
//
// So each timed call starts from idle workers: a call after a pause, where
// waking a library's sleeping threads (70-80 us on the 2-core Xeon VM) and
// cold caches count. OPSNN_PEER_BURST=n (default 1) times the steady state
// instead, as inside a model's run: each round calls a contender n times
// back to back and keeps the fastest of them (its threads still awake, its
// data warm), then leaves the gap as before.
struct Contender {
  std::function<void()> fn;
  int gap_ms;
};
std::vector<Stat> time_side_by_side(std::vector<Contender>& cs, int rounds) {
  const size_t n = cs.size();
  const char* g = std::getenv("OPSNN_PEER_GAP_MS");
  const double scale = g ? std::atof(g) / 20.0 : 1.0;
  const bool spin = std::getenv("OPSNN_PEER_SLEEP") == nullptr;
  const char* b = std::getenv("OPSNN_PEER_BURST");
  const int burst = std::max(1, b ? std::atoi(b) : 1);
  auto gap = [&](size_t i) {
    const int ms = static_cast<int>(cs[i].gap_ms * scale);
    if (ms <= 0) return;
    if (spin) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
      while (std::chrono::steady_clock::now() < until) {
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
  };
  std::vector<std::vector<double>> t(n);
  for (size_t i = 0; i < n; ++i) {  // warm up
    cs[i].fn();
    gap(i);
  }
  // Round r starts with contender r mod n: no contender always runs right
  // after the same other one (whose lingering threads or cache footprint
  // would then always land on it).
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < n; ++j) {
      const size_t i = (j + static_cast<size_t>(r)) % n;
      double best = 0;
      for (int c = 0; c < burst; ++c) {
        const auto t0 = std::chrono::steady_clock::now();
        cs[i].fn();
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        best = c == 0 ? ms : std::min(best, ms);
      }
      t[i].push_back(best);
      gap(i);
    }
  std::vector<Stat> s(n);
  for (size_t i = 0; i < n; ++i) {
    const Timing tm = timing_of(std::move(t[i]));
    s[i] = {tm.min_ms, tm.median_ms};
  }
  return s;
}

// The entries of `all` named by `sel`, a comma-separated list of indices
// (absent or "all": every entry; indices out of range are skipped). A token
// that `own(token, &entry)` accepts is an entry of the caller's own instead
// (a shape written out).
template <class T, class Own>
std::vector<T> pick(const std::vector<T>& all, const char* sel, Own&& own) {
  if (!sel || std::string(sel) == "all") return all;
  std::vector<T> r;
  const std::string s = sel;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t e = std::min(s.find(',', pos), s.size());
    const std::string tok = s.substr(pos, e - pos);
    T entry{};
    if (own(tok, &entry))
      r.push_back(entry);
    else if (const auto i = static_cast<size_t>(std::atoi(tok.c_str())); i < all.size())
      r.push_back(all[i]);
    pos = e + 1;
  }
  return r;
}
template <class T>
std::vector<T> pick(const std::vector<T>& all, const char* sel) {
  return pick(all, sel, [](const std::string&, T*) { return false; });
}

inline double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return v.empty() ? 0.0 : std::exp(s / static_cast<double>(v.size()));
}
inline double smallest(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}
inline double largest(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
}

}  // namespace opsnn::bench

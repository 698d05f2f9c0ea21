#include "opsnn/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "opsnn/cpu.h"
#include "opsnn/error.h"
#include "opsnn/log.h"

namespace opsnn {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

constexpr int64_t kPauseOnlyUs = 50;

int64_t spin_us_from_env() {
  const char* e = std::getenv("OPSNN_SPIN_US");
  if (!e) return 1000;
  char* end = nullptr;
  const long long v = std::strtoll(e, &end, 10);
  if (end == e || *end != '\0' || v < 0)
    throw Error("thread_pool", "OPSNN_SPIN_US", "an integer >= 0 (microseconds)",
                std::string("'") + e + "'");
  return v;
}

// Workers wait on a generation counter. The tasks of a job are handed out one
// at a time from an atomic counter (the caller runs tasks too); the work a
// task does depends only on its index (parallel_for's chunk boundaries only on
// n and grain), never on which thread runs it or on T.
class Pool {
 public:
  static Pool& get() {
    static Pool pool;
    return pool;
  }

  int threads() const { return threads_; }
  int64_t spin_us() const { return spin_us_.load(std::memory_order_relaxed); }
  void set_spin_us(int64_t us) {
    if (us < 0) throw Error("thread_pool", "spin_us", ">= 0", std::to_string(us));
    spin_us_.store(us, std::memory_order_relaxed);
  }

  void set_threads(int n) {
    if (n < 1) throw Error("thread_pool", "num_threads", ">= 1", std::to_string(n));
    std::lock_guard<std::mutex> run_lock(run_mu_);
    stop_workers();
    threads_ = n;
    start_workers();
  }

  void run(int64_t parts, FunctionRef<void(int64_t)> fn, int max_threads) {
    // Nested calls (from a task, on a worker or on the calling thread) run inline.
    if (parts <= 1 || threads_ == 1 || max_threads <= 1 || in_worker_ || in_run_) {
      for (int64_t p = 0; p < parts; ++p) fn(p);
      return;
    }
    std::lock_guard<std::mutex> run_lock(run_mu_);
    job_ = &fn;
    parts_ = parts;
    max_threads_ = max_threads;
    next_.store(0, std::memory_order_relaxed);
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    in_run_ = true;
    work();
    in_run_ = false;
    // Wait for workers to finish this generation (spin briefly, then yield).
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins > 2000) std::this_thread::yield();
    }
    job_ = nullptr;
  }

 private:
  Pool() {
    int n = cpu_info().logical_cores;
    if (const char* e = std::getenv("OPSNN_NUM_THREADS")) {
      int v = std::atoi(e);
      if (v < 1)
        throw Error("thread_pool", "OPSNN_NUM_THREADS", "an integer >= 1",
                    std::string("'") + e + "'");
      n = v;
    }
    threads_ = n;
    start_workers();
  }
  ~Pool() { stop_workers(); }

  void work() {
    if (index_ >= max_threads_) return;  // the job's per-thread workspace has no slot for it
    const FunctionRef<void(int64_t)>& fn = *job_;
    for (;;) {
      int64_t p = next_.fetch_add(1, std::memory_order_relaxed);
      if (p >= parts_) break;
      fn(p);
    }
  }

  // `seen` is read before the thread starts: a job posted while the thread is
  // still starting up must not be missed.
  void worker_loop(uint64_t seen, int index) {
    in_worker_ = true;
    index_ = index;
    for (;;) {
      // Poll for spin_us, then sleep. The first 50 us poll with `pause`; after
      // that each poll yields, so that a worker of one process does not keep a
      // core from the threads of another (ctest -j2 on 2 cores).
      const auto start = std::chrono::steady_clock::now();
      const auto until = start + std::chrono::microseconds(spin_us());
      const auto yield_from = start + std::chrono::microseconds(kPauseOnlyUs);
      uint32_t polls = 0;
      while (generation_.load(std::memory_order_acquire) == seen && !stop_) {
        cpu_relax();
        if (++polls % 64 != 0) continue;
        const auto now = std::chrono::steady_clock::now();
        if (now < yield_from) continue;
        if (now < until) {
          std::this_thread::yield();
          continue;
        }
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock,
                 [&] { return generation_.load(std::memory_order_acquire) != seen || stop_; });
      }
      if (stop_) return;
      seen = generation_.load(std::memory_order_acquire);
      work();
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  void start_workers() {
    stop_ = false;
    const uint64_t g = generation_.load(std::memory_order_acquire);
    for (int i = 1; i < threads_; ++i) {
      try {
        workers_.emplace_back([this, g, i] { worker_loop(g, i); });
      } catch (const std::exception& e) {
        // No thread (address-space or process limits): run on those that started.
        log_once(LogLevel::warn, "thread-start",
                 "thread pool: started " + std::to_string(i) + " of " + std::to_string(threads_) +
                     " threads (" + e.what() + "); using " + std::to_string(i));
        threads_ = i;
        break;
      }
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  int threads_ = 1;
  std::atomic<int64_t> spin_us_{spin_us_from_env()};
  std::vector<std::thread> workers_;
  std::mutex run_mu_, mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> next_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  const FunctionRef<void(int64_t)>* job_ = nullptr;
  int64_t parts_ = 0;
  int max_threads_ = 1;
  static thread_local bool in_worker_;
  static thread_local bool in_run_;  // the calling thread is running tasks of a job

 public:
  static thread_local int index_;  // 0 outside the workers, 1.. on them
};

thread_local bool Pool::in_worker_ = false;
thread_local bool Pool::in_run_ = false;
thread_local int Pool::index_ = 0;

}  // namespace

int num_threads() { return Pool::get().threads(); }
int64_t spin_us() { return Pool::get().spin_us(); }
void set_spin_us(int64_t us) { Pool::get().set_spin_us(us); }
void set_num_threads(int n) { Pool::get().set_threads(n); }

int thread_index() { return Pool::index_; }

void parallel_tasks(int64_t ntasks, FunctionRef<void(int64_t)> fn, int max_threads) {
  if (ntasks <= 0) return;
  Pool::get().run(ntasks, fn, max_threads);
}

void parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = (n + grain - 1) / grain;
  const int64_t parts = std::min<int64_t>(chunks, num_threads());
  if (parts <= 1) {
    fn(0, n);
    return;
  }
  parallel_tasks(parts, [&](int64_t t) {
    const int64_t c0 = t * chunks / parts, c1 = (t + 1) * chunks / parts;
    const int64_t b = c0 * grain, e = std::min(n, c1 * grain);
    if (b < e) fn(b, e);
  });
}

}  // namespace opsnn

// The library's thread pool.
//
// Work is split by the caller into chunks that depend only on the problem
// (never on the thread count), so every op gives bit-identical results for
// any OPSNN_NUM_THREADS. parallel_for hands out [begin, end) ranges; a range
// is computed by exactly one thread, in order.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace opsnn {

// Non-owning reference to a callable: no allocation on the hot path.
template <class Sig>
class FunctionRef;
template <class R, class... A>
class FunctionRef<R(A...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT: implicit on purpose
      : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o, A... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<A>(a)...);
        }) {}
  R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

// Threads used by parallel_for: OPSNN_NUM_THREADS, else all cores available
// to the process. set_num_threads(n) changes it at run time (n >= 1).
int num_threads();
void set_num_threads(int n);

// How long an idle worker keeps polling for the next job before it sleeps
// (microseconds): OPSNN_SPIN_US, default 1000. Waking a sleeping worker takes
// 30-100 us on a VM (a halted vCPU), which a stream of short ops would pay
// once per op; polling for a millisecond after each job keeps back-to-back
// ops off that path at the cost of up to 1 ms of one core per idle period.
// The first 50 us poll with `pause`, the rest yield the core between polls.
// 0: sleep as soon as a job ends.
int64_t spin_us();
void set_spin_us(int64_t us);

// Runs fn(begin, end) over [0, n) in chunks of at least `grain` items. The
// chunk boundaries are fixed by (n, grain) and the thread count only decides
// which thread runs which chunk, so per-item results never depend on it.
// Runs inline when n <= grain or one thread is configured.
void parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn);

// Runs fn(task) for task in [0, ntasks), one task per call, spread over at
// most `max_threads` threads (those with thread_index() < max_threads).
void parallel_tasks(int64_t ntasks, FunctionRef<void(int64_t)> fn, int max_threads = 1 << 30);

// The calling thread's index: 0 on any thread outside the pool (the thread
// that calls parallel_for runs tasks too), 1..num_threads()-1 on the pool's
// workers. Kernels index per-thread workspace slots with it: a workspace
// sized at create for T threads has slots 0..T-1, and parallel_tasks(...,
// T) keeps the workers beyond them out of the job if the pool grew since.
int thread_index();

}  // namespace opsnn

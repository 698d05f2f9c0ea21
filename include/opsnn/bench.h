// Timing and this machine's measured limits, for benchmarks and `opsnn bench`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "opsnn/dtype.h"
#include "opsnn/thread_pool.h"

namespace opsnn {

struct Timing {
  double min_ms = 0, median_ms = 0;
  int repeats = 0;
};

// Min and median of a list of times in ms (not empty); repeats = its size.
Timing timing_of(std::vector<double> ms);

// Runs fn once to warm up, then at least `min_repeats` times and for at least
// `min_seconds`; reports min and median.
Timing time_it(FunctionRef<void()> fn, int min_repeats = 5, double min_seconds = 0.25);

// Several functions timed in rounds, each round calling every one once in
// turn (after a warm-up call each), until every one has >= min_repeats times
// and the rounds took >= min_seconds in all: the functions share the
// machine's state (frequency, other tenants, bandwidth) call by call, so the
// ratios of their times hold where separate runs drift by more than the
// difference measured (each call follows another function's call, so the
// caches hold that one's data: the same for all of them).
std::vector<Timing> time_interleaved(const std::vector<FunctionRef<void()>>& fns,
                                     int min_repeats = 10, double min_seconds = 0.5);

// Streaming copy of `bytes` (src -> dst, both pre-touched) with the current
// thread count; GB/s counts bytes read + bytes written. Best of several runs
// of the faster of memcpy and a non-temporal-store copy (the best copy this
// machine does, so kernels that stream their outputs are compared fairly).
double measure_copy_gbps(size_t bytes = size_t{64} << 20);
// Streaming read of `bytes` (stream_read over a buffer of its own); GB/s read.
double measure_read_gbps(size_t bytes = size_t{256} << 20);
// Reads every byte of [p, p + bytes) once (p 4-byte aligned; vector loads
// with the active ISA, split over the current threads; integer XOR, so the
// time does not depend on the values) and returns the XOR of its 32-bit
// words (the tail bytes as a partial word): the plain stream that
// measure_read_gbps times, over a caller's buffer. A benchmark times it over
// the very bytes its kernel streams (same pages, same cache state),
// interleaved with the kernel, for a read reference that this machine's
// bandwidth swings cannot separate from the kernel's figure.
uint32_t stream_read(const void* p, size_t bytes);
// f32 FMA throughput of the active ISA on the current thread count, GFLOP/s
// (one FMA = 2 flops).
double measure_fma_peak_gflops();

// One benchmark of an op (what `opsnn bench` and ops_nn.bench() run).
// `kase` is "k=v,...": the op's bench_case keys, or for ops without one
// shape=AxBxC (every required input; n=N for one dim) with the other keys as
// attributes; packed=1 times the op's pre-packed form (schema.bench_packed);
// kernel=NAME forces that kernel (with packed=1: the weights as constant
// operands, packed at create by that kernel).
// threads > 0 sets the thread count first. Times >= 10 runs and >= 0.5 s and
// measures the machine's limit (FMA peak, read or copy bandwidth) in the same
// call for `limit_fraction`.
struct BenchResult {
  std::string op, kase, kernel, isa, limit_kind;
  DType dtype = DType::f32;
  int threads = 0;
  Timing timing;
  double bytes = 0, flops = 0, gbps = 0, gflops = 0, limit = 0, limit_fraction = 0;
  std::vector<std::string> constants;  // inputs passed as constant operands (packed=1)
};
BenchResult bench_op(const std::string& op, const std::string& kase, DType dtype, int threads = 0);
// Several cases of one op timed in the same rounds (time_interleaved), for
// comparing attributes, shapes or packed=1 against the op form on a machine
// whose speed drifts between runs; the results in the order of `kases`.
std::vector<BenchResult> bench_op_cases(const std::string& op,
                                        const std::vector<std::string>& kases, DType dtype,
                                        int threads = 0);

}  // namespace opsnn

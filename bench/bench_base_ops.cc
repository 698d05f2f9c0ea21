// Google Benchmark for the base ops on 64 MiB f32 tensors; reports GB/s and
// the fraction of the copy bandwidth measured in the same run.
#include <benchmark/benchmark.h>

#include "opsnn/bench.h"
#include "opsnn/opsnn.h"

namespace {

double copy_gbps() {
  static double v = opsnn::measure_copy_gbps();
  return v;
}

void BM_Unary(benchmark::State& state, const char* op) {
  using namespace opsnn;
  const int64_t n = int64_t{16} << 20;  // 64 MiB of f32
  Tensor x = Tensor::zeros({n}, DType::f32);
  Tensor y = Tensor::zeros({n}, DType::f32);
  Op o = Op::create(op, {x.desc()});
  for (auto _ : state) o.run({&x, 1}, {&y, 1}, nullptr);
  const double bytes = 2.0 * static_cast<double>(n) * 4;
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.counters["copy_GBps"] = copy_gbps();
  state.counters["frac_of_copy"] = benchmark::Counter(bytes * static_cast<double>(state.iterations()) / copy_gbps() / 1e9,
                                                      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK_CAPTURE(BM_Unary, gelu, "gelu")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Unary, silu, "silu")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Unary, relu, "relu")->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

// Google Benchmark for the binary, gated and reduction ops on 64 MiB f32
// inputs, 1 and 2 threads side by side; GB/s counts every input and output
// byte once and frac_of_copy compares with the copy bandwidth measured in the
// same process. Run with --benchmark_repetitions=N for min/median.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/opsnn.h"

namespace {

using namespace opsnn;

double copy_gbps() {
  static double v = measure_copy_gbps();
  return v;
}

void run_case(benchmark::State& state, const std::string& op, const std::vector<Shape>& shapes,
              const Attrs& attrs) {
  set_num_threads(static_cast<int>(state.range(0)));
  std::vector<Tensor> ins;
  for (const Shape& s : shapes) {
    Tensor t = Tensor::empty(s, DType::f32);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.data_as<float>()[i] = static_cast<float>(i % 97) * 0.01f + 0.5f;
    ins.push_back(t);
  }
  Op o = Op::create(op, ins, attrs);
  std::vector<Tensor> outs;
  for (const TensorDesc& d : o.outputs()) outs.push_back(Tensor::zeros(d.shape, d.dtype));
  double bytes = 0;
  for (const Tensor& t : ins) bytes += static_cast<double>(t.nbytes());
  for (const Tensor& t : outs) bytes += static_cast<double>(t.nbytes());
  const double copy = copy_gbps();
  std::shared_ptr<void> ws(o.workspace_bytes() ? aligned_alloc_bytes(o.workspace_bytes()) : nullptr,
                           aligned_free);
  for (auto _ : state) o.run(ins, outs, {static_cast<std::byte*>(ws.get()), o.workspace_bytes()});
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.counters["copy_GBps"] = copy;
  state.counters["frac_of_copy"] =
      benchmark::Counter(bytes * static_cast<double>(state.iterations()) / copy / 1e9,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

const int64_t kN = int64_t{16} << 20;  // 64 MiB of f32

void BM_AddSame(benchmark::State& s) { run_case(s, "add", {{kN}, {kN}}, {}); }
void BM_AddRow(benchmark::State& s) { run_case(s, "add", {{4096, 4096}, {4096}}, {}); }
void BM_MulChannel(benchmark::State& s) {
  run_case(s, "mul", {{4, 256, 128, 128}, {1, 256, 1, 1}}, {});
}
void BM_Swiglu(benchmark::State& s) { run_case(s, "swiglu", {{2048, 8192}}, {}); }
void BM_SumRows(benchmark::State& s) {
  run_case(s, "sum", {{4096, 4096}}, {{"axes", std::vector<int64_t>{1}}});
}
void BM_SumCols(benchmark::State& s) {
  run_case(s, "sum", {{4096, 4096}}, {{"axes", std::vector<int64_t>{0}}});
}
void BM_SumAll(benchmark::State& s) { run_case(s, "sum", {{kN}}, {}); }
void BM_ArgmaxLogits(benchmark::State& s) {
  run_case(s, "argmax", {{512, 32768}}, {{"axis", int64_t{1}}});
}

#define OPSNN_BR_BENCH(fn) \
  BENCHMARK(fn)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond)
OPSNN_BR_BENCH(BM_AddSame);
OPSNN_BR_BENCH(BM_AddRow);
OPSNN_BR_BENCH(BM_MulChannel);
OPSNN_BR_BENCH(BM_Swiglu);
OPSNN_BR_BENCH(BM_SumRows);
OPSNN_BR_BENCH(BM_SumCols);
OPSNN_BR_BENCH(BM_SumAll);
OPSNN_BR_BENCH(BM_ArgmaxLogits);

}  // namespace

BENCHMARK_MAIN();

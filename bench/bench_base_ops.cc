// Google Benchmark of the base ops on 64 MiB f32 tensors (4096 x 4096) with 1
// and 2 threads: GB/s and the fraction of the copy bandwidth measured in the
// same process with the same thread count (opsnn::measure_copy_gbps: the
// faster of memcpy and a non-temporal-store copy, bytes read + written).
//
// Ops not registered in this build are skipped with a note, so the benchmark
// works before and after each op lands. A case comes from the op's
// bench_case if it has one (its default case if that is 64 MiB, else asked
// for rows=4096,cols=4096 or shape=4096x4096), else every input gets the full
// shape, and if the schema rejects that, inputs after the first get the last
// dimension (weights and biases of the norms).
//
// Counters per run: min_ms and median_ms of the timed iterations, GBps (bytes
// of one call / min time; bytes from the op's cost function, else all inputs
// and outputs), copy_GBps, frac_of_copy = GBps / copy_GBps. The machine is
// shared, so min is the figure to compare (the copy limit is a min too); a
// summary table follows the run. Each benchmark runs a fixed 40 iterations
// right after measuring the copy limit with the same thread count.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/check.h"
#include "opsnn/memory.h"
#include "opsnn/opsnn.h"

namespace {

using namespace opsnn;

constexpr int64_t kRows = 4096, kCols = 4096;  // 16 Mi f32 = 64 MiB
const char* const kOps[] = {"add", "gelu", "silu", "softmax", "layer_norm", "rms_norm"};
constexpr int kThreads[] = {1, 2};

constexpr int kIterations = 40;  // fixed, so each benchmark runs once

// One op instance with its inputs, outputs and workspace, built once.
struct Setup {
  std::vector<Tensor> ins, outs;
  std::unique_ptr<Op> op;
  std::unique_ptr<Arena> ws;
  std::span<std::byte> w;
  double bytes = 0;
};

std::unique_ptr<Setup> try_build(const OpSchema& s, const CheckCase& c) {
  auto st = std::make_unique<Setup>();
  st->ins = make_case_inputs(c, DType::f32, 42);
  st->op = std::make_unique<Op>(Op::create(s.name, st->ins, c.attrs));
  for (const TensorDesc& d : st->op->outputs()) st->outs.push_back(Tensor::zeros(d.shape, d.dtype));
  st->ws = std::make_unique<Arena>(st->op->workspace_bytes() + kAlignment);
  st->w = st->ws->span(st->op->workspace_bytes());
  double flops = 0;
  if (s.cost) {
    s.cost(st->op->call(), &st->bytes, &flops);
  } else {
    for (const Tensor& x : st->ins) st->bytes += static_cast<double>(x.nbytes());
    for (const Tensor& y : st->outs) st->bytes += static_cast<double>(y.nbytes());
  }
  return st;
}

// Returns nullptr (and the reason) when no 64 MiB case can be built.
std::unique_ptr<Setup> build(const OpSchema& s, std::string* why) {
  const Shape full = {kRows, kCols};
  std::vector<CheckCase> tries;
  if (s.bench_case) {
    // The op's own default case if it is 64 MiB, else the usual key spellings.
    const std::string r = std::to_string(kRows), c = std::to_string(kCols);
    const std::map<std::string, std::string> kvs[] = {
        {}, {{"rows", r}, {"cols", c}}, {{"shape", r + "x" + c}}};
    for (const auto& kv : kvs) {
      try {
        CheckCase cc = s.bench_case(kv, DType::f32);
        if (!cc.inputs.empty() && cc.inputs[0].numel() == kRows * kCols) tries.push_back(cc);
      } catch (const std::exception& e) {
        *why = e.what();
      }
    }
  }
  {
    CheckCase same, last_dim;
    for (const ArgSpec& a : s.inputs) {
      if (a.optional || a.variadic) continue;
      same.inputs.push_back(TensorDesc(DType::f32, full));
      last_dim.inputs.push_back(
          TensorDesc(DType::f32, last_dim.inputs.empty() ? full : Shape{kCols}));
    }
    if (s.cases) {  // keep the value ranges of the op's own cases
      auto cs = s.cases(DType::f32);
      if (!cs.empty()) same.ranges = last_dim.ranges = cs.front().ranges;
    }
    tries.push_back(same);
    tries.push_back(last_dim);
  }
  for (const CheckCase& c : tries) {
    try {
      return try_build(s, c);
    } catch (const std::exception& e) {
      *why = e.what();
    }
  }
  return nullptr;
}

struct Result {
  std::string op;
  int threads;
  double min_ms, median_ms, gbps, copy;
};
std::vector<Result>& results() {
  static std::vector<Result> r;
  return r;
}

void run_op(benchmark::State& state, Setup* st, const std::string& name, int threads) {
  // The limit is measured right before the op, with the same thread count.
  set_num_threads(threads);
  const double copy = measure_copy_gbps(size_t{64} << 20);
  st->op->run(st->ins, st->outs, st->w);  // warm-up
  std::vector<double> ms;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    st->op->run(st->ins, st->outs, st->w);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(s);
    ms.push_back(s * 1e3);
  }
  const Timing tm = timing_of(std::move(ms));
  const double min_ms = tm.min_ms, median_ms = tm.median_ms;
  const double gbps = st->bytes / (min_ms * 1e-3) / 1e9;
  state.SetBytesProcessed(static_cast<int64_t>(st->bytes) * state.iterations());
  state.counters["min_ms"] = min_ms;
  state.counters["median_ms"] = median_ms;
  state.counters["GBps"] = gbps;
  state.counters["copy_GBps"] = copy;
  state.counters["frac_of_copy"] = gbps / copy;
  state.SetLabel(st->op->kernel_name());
  results().push_back({name, threads, min_ms, median_ms, gbps, copy});
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::unique_ptr<Setup>> setups;
  for (const char* name : kOps) {
    const OpSchema* s = Registry::global().find(name);
    if (!s) {
      std::printf("note: op '%s' is not registered in this build; skipped\n", name);
      continue;
    }
    std::string why;
    auto st = build(*s, &why);
    if (!st) {
      std::printf("note: op '%s': no 64 MiB f32 case could be built (%s); skipped\n", name,
                  why.c_str());
      continue;
    }
    for (int t : kThreads) {
      benchmark::RegisterBenchmark(
          (std::string(name) + "/f32/64MiB/threads:" + std::to_string(t)).c_str(),
          [p = st.get(), n = std::string(name), t](benchmark::State& state) {
            run_op(state, p, n, t);
          })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(kIterations);
    }
    setups.push_back(std::move(st));
  }
  std::fflush(stdout);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::printf("\n%-12s %7s %9s %10s %8s %10s %9s\n", "op", "threads", "min_ms", "median_ms", "GB/s",
              "copy_GB/s", "fraction");
  for (const Result& r : results())
    std::printf("%-12s %7d %9.3f %10.3f %8.2f %10.2f %8.1f%%\n", r.op.c_str(), r.threads, r.min_ms,
                r.median_ms, r.gbps, r.copy, 100 * r.gbps / r.copy);
  return 0;
}

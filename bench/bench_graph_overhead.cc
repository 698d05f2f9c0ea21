// The graph executor's cost per node: a chain of 200 small element-wise
// nodes on [64] f32 tensors run as one Plan, against the same 200 Ops run
// back to back by hand on preallocated tensors (the kernels' own time plus
// Op::run's checks). Interleaved rounds; min and median of each.
//
//   build/release/bench/opsnn_bench_graph_overhead [nodes=200] [n=64] [rounds=2000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "opsnn/graph.h"
#include "opsnn/opsnn.h"

using namespace opsnn;
using namespace opsnn::graph;

namespace {
const char* kOps[] = {"add", "relu", "mul", "tanh", "sub", "neg"};
bool binary(const char* op) { return op[0] == 'a' || op[0] == 'm' || op[0] == 's'; }

double us_of(const std::chrono::steady_clock::time_point& t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 200;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 64;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 2000;
  Graph g;
  ValueId v = g.input("x", DType::f32, {n});
  Tensor c = Tensor::empty({n}, DType::f32);
  for (int64_t i = 0; i < n; ++i) c.data_as<float>()[i] = 0.5f + 0.001f * static_cast<float>(i);
  ValueId cv = g.constant("c", c);
  for (int i = 0; i < nodes; ++i) {
    const char* op = kOps[i % 6];
    v = binary(op) ? g.node(op, {v, cv})[0] : g.node(op, {v})[0];
  }
  g.output(v);
  const TensorDesc d(DType::f32, {n});
  Plan plan = Plan::create(g, {d});

  // The same ops by hand: one Op each, ping-ponging two buffers.
  std::vector<Op> ops;
  for (int i = 0; i < nodes; ++i) {
    const char* op = kOps[i % 6];
    ops.push_back(binary(op) ? Op::create(op, std::vector<TensorDesc>{d, d})
                             : Op::create(op, std::vector<TensorDesc>{d}));
  }
  Tensor x = Tensor::zeros({n}, DType::f32), y = Tensor::zeros({n}, DType::f32);
  Tensor bufs[2] = {Tensor::zeros({n}, DType::f32), Tensor::zeros({n}, DType::f32)};
  std::vector<Tensor> ins{x}, outs{y};
  // Arguments bound once (as a plan binds them), so the loop times the ops.
  std::vector<std::vector<Tensor>> args(nodes);
  std::vector<Tensor> results(nodes);
  for (int i = 0; i < nodes; ++i) {
    args[i].push_back(i == 0 ? x : bufs[(i - 1) & 1]);
    if (binary(kOps[i % 6])) args[i].push_back(c);
    results[i] = bufs[i & 1];
  }
  auto by_hand = [&] {
    for (int i = 0; i < nodes; ++i) ops[i].run(args[i], std::span<Tensor>(&results[i], 1), {});
  };
  std::vector<double> tp, th;
  for (int r = 0; r < rounds + 50; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    plan.run(ins, outs);
    const double a = us_of(t0);
    t0 = std::chrono::steady_clock::now();
    by_hand();
    const double b = us_of(t0);
    if (r >= 50) {
      tp.push_back(a);
      th.push_back(b);
    }
  }
  std::sort(tp.begin(), tp.end());
  std::sort(th.begin(), th.end());
  const double pmin = tp.front(), pmed = tp[tp.size() / 2], hmin = th.front(),
               hmed = th[th.size() / 2];
  std::printf("%d nodes on f32[%lld], %d rounds, %d threads (interleaved; machine shared)\n", nodes,
              static_cast<long long>(n), rounds, num_threads());
  std::printf("plan.run          min %8.2f us  median %8.2f us\n", pmin, pmed);
  std::printf("ops by hand       min %8.2f us  median %8.2f us\n", hmin, hmed);
  std::printf(
      "per node: plan %.3f us, by hand %.3f us, executor overhead %.3f us (median %.3f us)\n",
      pmin / nodes, hmin / nodes, (pmin - hmin) / nodes, (pmed - hmed) / nodes);
  return 0;
}

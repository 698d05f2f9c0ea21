// Counts heap allocations in steady-state runs of an ONNX model's plan:
// `opsnn_onnx_steady_alloc MODEL.onnx IN0.pb [IN1.pb ...]` imports, plans,
// runs once, then counts every heap allocation over 10 runs. Prints the count;
// exits 1 if it is not zero (OPSNN_ALLOC_TRACE=1 prints where each one
// comes from). Used by tests/unet_block_test.py.

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "opsnn/graph.h"
#include "opsnn/onnx.h"
#include "support/alloc_counter.h"

namespace {

int count_allocations(int argc, char** argv) {
  using namespace opsnn;
  const graph::Graph g = onnx::import_model(argv[1]);
  std::vector<Tensor> inputs;
  std::vector<TensorDesc> descs;
  for (int i = 2; i < argc; ++i) {
    inputs.push_back(onnx::read_tensor(argv[i]));
    descs.push_back(inputs.back().desc());
  }
  graph::PlanOptions opt;
  opt.input_values = inputs;
  graph::Plan plan = graph::Plan::create(g, descs, opt);
  std::vector<Tensor> outputs;
  for (const TensorDesc& d : plan.output_descs())
    outputs.push_back(Tensor::empty(d.shape, d.dtype));
  plan.run(inputs, outputs);  // warm-up (thread pool start)
  constexpr int kRuns = 10;
  test::start_counting_allocs();
  for (int i = 0; i < kRuns; ++i) plan.run(inputs, outputs);
  const int64_t allocs = test::stop_counting_allocs();
  std::printf("steady-state heap allocations over %d runs: %lld\n", kRuns,
              static_cast<long long>(allocs));
  return allocs == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx [IN.pb ...]\n", argv[0]);
    return 2;
  }
  try {
    return count_allocations(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}

// Counts heap allocations in steady-state runs of an ONNX model's plan:
// `opsnn_onnx_steady_alloc MODEL.onnx IN0.pb [IN1.pb ...]` imports, plans,
// runs once, then counts every operator new over 10 runs. Prints the count;
// exits 1 if it is not zero (OPSNN_ALLOC_TRACE=1 prints where each one
// comes from). Used by tests/unet_block_test.py.
#include <execinfo.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "opsnn/graph.h"
#include "opsnn/onnx.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocs{0};
}  // namespace

void* operator new(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocs.fetch_add(1, std::memory_order_relaxed);
    if (std::getenv("OPSNN_ALLOC_TRACE")) {
      g_counting = false;
      void* frames[12];
      backtrace_symbols_fd(frames, backtrace(frames, 12), 2);
      g_counting = true;
    }
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

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
  g_counting = true;
  for (int i = 0; i < kRuns; ++i) plan.run(inputs, outputs);
  g_counting = false;
  std::printf("steady-state heap allocations over %d runs: %lld\n", kRuns,
              static_cast<long long>(g_allocs.load()));
  return g_allocs.load() == 0 ? 0 : 1;
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

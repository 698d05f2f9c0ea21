// Phase two allocates nothing: every op's case table (f32, bf16, f16 where
// the op lists them) is created with the kernel dispatch picks, outputs and
// workspace are allocated outside the counted region, and the heap
// allocations of the `run` calls are counted (operator new, and aligned_alloc,
// which the library's aligned buffers use).
// ctest runs this under OPSNN_ISA=scalar|avx2|avx512.
//
// Each case runs once uncounted (process-wide lazy statics), then the thread
// pool is restarted and the counted calls run on a fresh thread, so that a
// per-thread buffer grown on first use is counted rather than hidden by an
// earlier case.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "opsnn/check.h"
#include "opsnn/memory.h"
#include "opsnn/opsnn.h"
#include "support/alloc_counter.h"

namespace opsnn {
namespace {

// Calls per case: 1,000, fewer when one call is slow (the counted calls of a
// case take about kBudget), never fewer than 10.
constexpr int kCalls = 1000, kMinCalls = 10;
constexpr double kBudgetSeconds = 0.01;

struct Offender {
  std::string what;
  int64_t allocs;
};

class AllocFreeRun : public ::testing::TestWithParam<DType> {};

TEST_P(AllocFreeRun, EveryOpAndCase) {
  const DType dtype = GetParam();
  const Registry& reg = Registry::global();
  std::vector<Offender> offenders;
  int cases_run = 0, reference_picked = 0;
  const char* only = std::getenv("OPSNN_ALLOC_OP");  // one op, with OPSNN_ALLOC_TRACE
  for (const std::string& name : reg.op_names()) {
    if (only && name != only) continue;
    const OpSchema& s = reg.schema(name);
    if (!s.cases || std::find(s.dtypes.begin(), s.dtypes.end(), dtype) == s.dtypes.end()) continue;
    for (const CheckCase& c : s.cases(dtype)) {
      std::vector<Tensor> ins = make_case_inputs(c, dtype, 7);
      Op op;
      try {
        op = Op::create(name, case_descs(c, dtype), c.attrs);
      } catch (const Error& e) {
        // A case no kernel takes in this dtype: the checker reports those.
        if (std::getenv("OPSNN_ALLOC_TRACE"))
          std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
        continue;
      }
      // The float64 reference kernel (the last of every list) converts
      // through double vectors by design: it is the oracle, not a kernel
      // users are meant to run, and is left out here.
      const std::vector<KernelDesc>& ks = reg.kernels(name);
      if (op.kernel_name() == ks.back().name &&
          ks.back().priority == std::numeric_limits<int>::min()) {
        ++reference_picked;
        continue;
      }
      std::vector<Tensor> outs;
      for (const TensorDesc& d : op.outputs()) outs.push_back(Tensor::zeros(d.shape, d.dtype));
      std::shared_ptr<void> ws_mem(aligned_alloc_bytes(std::max<size_t>(op.workspace_bytes(), 1)),
                                   aligned_free);
      std::span<std::byte> ws{static_cast<std::byte*>(ws_mem.get()), op.workspace_bytes()};
      const auto t0 = std::chrono::steady_clock::now();
      op.run(ins, outs, ws);
      const double once =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const int calls =
          std::clamp(static_cast<int>(kBudgetSeconds / std::max(once, 1e-9)), kMinCalls, kCalls);
      set_num_threads(num_threads());  // fresh workers: no per-thread buffer left from before
      int64_t allocs = 0;
      std::thread runner([&] {
        test::start_counting_allocs();
        for (int i = 0; i < calls; ++i) op.run(ins, outs, ws);
        allocs = test::stop_counting_allocs();
      });
      runner.join();
      ++cases_run;
      if (allocs)
        offenders.push_back({name + " case " + c.name + " kernel " + op.kernel_name() + " (" +
                                 std::to_string(calls) + " calls)",
                             allocs});
    }
  }
  for (const Offender& o : offenders)
    ADD_FAILURE() << o.what << ": " << o.allocs << " allocations in run";
  std::printf("%s: %d cases run, %zu allocate in run; %d cases left to the reference kernel\n",
              dtype_name(dtype), cases_run, offenders.size(), reference_picked);
  EXPECT_GT(cases_run, 0);
}

// The counter itself: it sees operator new on another thread and the
// library's aligned buffers, so the zero counts above mean something.
TEST(AllocCounter, CountsNewAndAlignedAllocOnAnyThread) {
  int64_t vec = -1, aligned = -1, none = -1;
  std::thread([&] {
    test::start_counting_allocs();
    std::vector<int> v(100);
    vec = test::stop_counting_allocs();
    test::start_counting_allocs();
    void* p = aligned_alloc_bytes(256);
    aligned = test::stop_counting_allocs();
    aligned_free(p);
    test::start_counting_allocs();
    none = test::stop_counting_allocs();
    v[1] = 1;
  }).join();
  EXPECT_EQ(vec, 1);
  EXPECT_EQ(aligned, 1);
  EXPECT_EQ(none, 0);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AllocFreeRun,
                         ::testing::Values(DType::f32, DType::bf16, DType::f16),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(dtype_name(info.param));
                         });

}  // namespace
}  // namespace opsnn

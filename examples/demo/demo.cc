// The main demo: runs the library's kernels on the activation sizes of real
// AIGC models and prints what it measured against this machine's limits.
#include <cstdio>
#include <string>
#include <vector>

#include "opsnn/bench.h"
#include "opsnn/check.h"
#include "opsnn/opsnn.h"

using namespace opsnn;

namespace {

struct Step {
  const char* what;
  const char* op;
  Shape shape;
  Attrs attrs;
};

void run_step(const Step& s, double copy_gbps) {
  Tensor x = Tensor::zeros(s.shape, DType::f32);
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>((i % 1000) * 0.006 - 3);
  Op op = Op::create(s.op, {x.desc()}, s.attrs);
  std::vector<Tensor> outs;
  for (const TensorDesc& d : op.outputs()) outs.push_back(Tensor::zeros(d.shape, d.dtype));
  Timing t = time_it([&] { op.run({&x, 1}, outs, nullptr); }, 10, 0.2);
  double bytes = static_cast<double>(x.nbytes());
  for (const Tensor& o : outs) bytes += static_cast<double>(o.nbytes());
  const double gbps = bytes / (t.min_ms * 1e-3) / 1e9;
  std::printf("  %-34s %-10s %-16s %8.3f ms (median %8.3f)  %6.1f GB/s  %5.1f%% of copy\n", s.what, s.op,
              shape_str(s.shape).c_str(), t.min_ms, t.median_ms, gbps, 100 * gbps / copy_gbps);
}

}  // namespace

int main() {
  const CpuInfo& cpu = cpu_info();
  std::printf("ops-nn %s demo on %s: ISA %s, %d thread(s), L2 %zu KiB\n", version(), cpu.brand.c_str(),
              isa_name(active_isa()), num_threads(), cpu.l2_bytes >> 10);
  const double copy = measure_copy_gbps();
  const double peak = measure_fma_peak_gflops();
  std::printf("machine limits measured now: copy %.1f GB/s, f32 FMA peak %.0f GFLOP/s\n\n", copy, peak);

  std::printf("Activations of real models (f32):\n");
  const std::vector<Step> steps = {
      {"GPT-2 MLP gelu (1024 tok x 3072)", "gelu", {1024, 3072}, {}},
      {"GPT-2 MLP gelu tanh form", "gelu", {1024, 3072}, {{"approximate", std::string("tanh")}}},
      {"LLaMA-7B FFN silu (512 tok x 11008)", "silu", {512, 11008}, {}},
      {"SD UNet silu (320 ch x 64 x 64)", "silu", {2, 320, 64, 64}, {}},
      {"CLIP quick_gelu (77 tok x 3072)", "quick_gelu", {77, 3072}, {}},
  };
  for (const Step& s : steps) run_step(s, copy);

  std::printf("\nPrecision vs float64 reference (opsnn check):\n");
  for (const char* op : {"gelu", "silu", "quick_gelu"}) {
    for (DType t : {DType::f32, DType::bf16}) {
      CheckOptions o;
      o.dtype = t;
      double worst = 0;
      int failed = 0;
      for (const CaseResult& r : check_op(op, o)) {
        worst = std::max(worst, r.max_rel_err);
        failed += !r.passed;
      }
      std::printf("  %-10s %-5s max rel err %.2e  %s\n", op, dtype_name(t), worst, failed ? "FAIL" : "ok");
    }
  }
  return 0;
}

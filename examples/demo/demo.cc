// The main demo: runs the library's kernels on the activation sizes of real
// AIGC models and prints what it measured against this machine's limits.
#include <algorithm>
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
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data_as<float>()[i] = static_cast<float>((i % 1000) * 0.006 - 3);
  Op op = Op::create(s.op, {x.desc()}, s.attrs);
  std::vector<Tensor> outs;
  for (const TensorDesc& d : op.outputs()) outs.push_back(Tensor::zeros(d.shape, d.dtype));
  Timing t = time_it([&] { op.run({&x, 1}, outs); }, 10, 0.2);
  double bytes = static_cast<double>(x.nbytes());
  for (const Tensor& o : outs) bytes += static_cast<double>(o.nbytes());
  const double gbps = bytes / (t.min_ms * 1e-3) / 1e9;
  std::printf("  %-34s %-10s %-16s %8.3f ms (median %8.3f)  %6.1f GB/s  %5.1f%% of copy\n", s.what,
              s.op, shape_str(s.shape).c_str(), t.min_ms, t.median_ms, gbps,
              100 * gbps / copy_gbps);
}

Tensor random_tensor(const Shape& shape, float scale, uint32_t seed) {
  Tensor t = Tensor::empty(shape, DType::f32);
  float* p = t.data_as<float>();
  uint32_t x = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    x = x * 1664525u + 1013904223u;
    p[i] = scale * (static_cast<float>(x >> 8) / 8388608.0f - 1.0f);
  }
  return t;
}

// One GPT-2-small decoder layer on a 512-token prompt, built from the
// library's ops with the two-phase API: each op is created once (kernel
// chosen, workspace sized), then the layer runs with no allocation.
void gpt2_layer(double peak_gflops) {
  const int64_t L = 512, C = 768, H = 12, D = 64, F = 3072;
  struct Node {
    const char* name;
    Op op;
    std::vector<Tensor> in;
    std::vector<Tensor> out;
    double flops;
  };
  Tensor x = random_tensor({L, C}, 1.0f, 1);
  Tensor ln_w = random_tensor({C}, 1.0f, 2), ln_b = random_tensor({C}, 0.1f, 3);
  Tensor wq = random_tensor({C, C}, 0.05f, 4), wk = random_tensor({C, C}, 0.05f, 5),
         wv = random_tensor({C, C}, 0.05f, 6);
  Tensor bq = random_tensor({C}, 0.02f, 7), wo = random_tensor({C, C}, 0.05f, 8),
         bo = random_tensor({C}, 0.02f, 9);
  Tensor w1 = random_tensor({C, F}, 0.05f, 10), b1 = random_tensor({F}, 0.02f, 11);
  Tensor w2 = random_tensor({F, C}, 0.05f, 12), b2 = random_tensor({C}, 0.02f, 13);
  Tensor ln1 = Tensor::empty({L, C}, DType::f32), q = Tensor::empty({L, C}, DType::f32);
  Tensor k = Tensor::empty({L, C}, DType::f32), v = Tensor::empty({L, C}, DType::f32);
  Tensor att = Tensor::empty({1, L, H, D}, DType::f32), h = Tensor::empty({L, C}, DType::f32);
  Tensor ln2 = Tensor::empty({L, C}, DType::f32), f = Tensor::empty({L, F}, DType::f32);
  Tensor y = Tensor::empty({L, C}, DType::f32);
  auto heads = [&](const Tensor& t) { return t.reshape({1, L, H, D}); };
  const double mm = 2.0 * L * C * C;
  std::vector<Node> nodes;
  auto add = [&](const char* name, const char* op, std::vector<Tensor> in, std::vector<Tensor> out,
                 Attrs a, double flops) {
    nodes.push_back({name, Op::create(op, in, a), in, out, flops});
  };
  add("ln_1", "layer_norm", {x, ln_w, ln_b}, {ln1}, {}, 0);
  add("q = linear", "linear", {ln1, wq, bq}, {q}, {}, mm);
  add("k = linear", "linear", {ln1, wk, bq}, {k}, {}, mm);
  add("v = linear", "linear", {ln1, wv, bq}, {v}, {}, mm);
  add("causal sdpa (12 heads)", "sdpa", {heads(q), heads(k), heads(v)}, {att},
      {{"causal", int64_t{1}}, {"layout", std::string("BLHD")}}, 2.0 * H * L * L * D);
  add("proj + residual", "fused_matmul", {att.reshape({L, C}), wo, bo, x}, {h}, {}, mm);
  add("ln_2", "layer_norm", {h, ln_w, ln_b}, {ln2}, {}, 0);
  add("mlp up + gelu", "fused_matmul", {ln2, w1, b1}, {f}, {{"activation", std::string("gelu")}},
      2.0 * L * C * F);
  add("mlp down + residual", "fused_matmul", {f, w2, b2, h}, {y}, {}, 2.0 * L * F * C);
  size_t ws = 0;
  for (const Node& n : nodes) ws = std::max(ws, n.op.workspace_bytes());
  Arena arena(ws + kAlignment);
  auto w = arena.span(ws);
  auto run_layer = [&] {
    for (Node& n : nodes) n.op.run(n.in, n.out, w);
  };
  Timing total = time_it(run_layer, 5, 0.5);
  double flops = 0;
  for (const Node& n : nodes) flops += n.flops;
  std::printf("\nGPT-2-small decoder layer, 512-token prompt (f32, causal), workspace %.1f MiB:\n",
              static_cast<double>(ws) / (1 << 20));
  for (Node& n : nodes) {
    Timing t = time_it([&] { n.op.run(n.in, n.out, w); }, 5, 0.1);
    std::printf("  %-24s %-32s %8.3f ms", n.name, n.op.kernel_name().c_str(), t.min_ms);
    if (n.flops > 0)
      std::printf("  %6.1f GFLOP/s (%4.1f%% of FMA peak)", n.flops / t.min_ms / 1e6,
                  n.flops / t.min_ms / 1e4 / peak_gflops);
    std::printf("\n");
  }
  std::printf(
      "  whole layer: min %.2f ms, median %.2f ms = %.1f GFLOP/s (%.1f%% of the FMA peak)\n",
      total.min_ms, total.median_ms, flops / total.min_ms / 1e6,
      flops / total.min_ms / 1e4 / peak_gflops);
}

}  // namespace

int main() {
  const CpuInfo& cpu = cpu_info();
  std::printf("ops-nn %s demo on %s: ISA %s, %d thread(s), L2 %zu KiB\n", version(),
              cpu.brand.c_str(), isa_name(active_isa()), num_threads(), cpu.l2_bytes >> 10);
  const double copy = measure_copy_gbps();
  const double peak = measure_fma_peak_gflops();
  std::printf("machine limits measured now: copy %.1f GB/s, f32 FMA peak %.0f GFLOP/s\n\n", copy,
              peak);

  std::printf(
      "Activations of real models (f32; tensors that fit in the L2/L3 run above the DRAM copy "
      "rate):\n");
  const std::vector<Step> steps = {
      {"GPT-2 MLP gelu (1024 tok x 3072)", "gelu", {1024, 3072}, {}},
      {"GPT-2 MLP gelu tanh form", "gelu", {1024, 3072}, {{"approximate", std::string("tanh")}}},
      {"LLaMA-7B FFN silu (512 tok x 11008)", "silu", {512, 11008}, {}},
      {"SD UNet silu (320 ch x 64 x 64)", "silu", {2, 320, 64, 64}, {}},
      {"CLIP quick_gelu (77 tok x 3072)", "quick_gelu", {77, 3072}, {}},
  };
  for (const Step& s : steps) run_step(s, copy);

  gpt2_layer(peak);

  std::printf("\nPrecision vs float64 reference (opsnn check):\n");
  for (const char* op : {"gelu", "silu", "quick_gelu"}) {
    for (DType t : {DType::f32, DType::bf16}) {
      CheckOptions o;
      o.dtype = t;
      double worst_abs = 0, worst_ratio = 0;
      int failed = 0, cases = 0;
      for (const CaseResult& r : check_op(op, o)) {
        worst_abs = std::max(worst_abs, r.max_abs_err);
        worst_ratio = std::max(worst_ratio, r.worst_ratio);
        failed += !r.passed;
        ++cases;
      }
      std::printf("  %-10s %-5s %2d cases  max abs err %.2e  worst err/tolerance %.2f  %s\n", op,
                  dtype_name(t), cases, worst_abs, worst_ratio, failed ? "FAIL" : "ok");
    }
  }
  return 0;
}

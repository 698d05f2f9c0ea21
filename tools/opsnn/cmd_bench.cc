#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "opsnn/bench.h"
#include "opsnn/opsnn.h"

namespace opsnn::cli {
namespace {

struct BenchArgs {
  std::string op, kase, dtype = "f32", isa;
  int threads = 0;
  bool json = false;
};

int run_bench(const BenchArgs& a) {
  if (!a.isa.empty()) set_isa_cap(isa_from_name(a.isa));
  const BenchResult r = bench_op(a.op, a.kase, dtype_from_name(a.dtype), a.threads);
  const Timing& tm = r.timing;
  const std::string& kernel = r.kernel;
  if (a.json) {
    nlohmann::json j = {{"op", a.op},
                        {"case", a.kase},
                        {"dtype", a.dtype},
                        {"kernel", kernel},
                        {"isa", r.isa},
                        {"threads", r.threads},
                        {"min_ms", tm.min_ms},
                        {"median_ms", tm.median_ms},
                        {"repeats", tm.repeats},
                        {"bytes", r.bytes},
                        {"flops", r.flops},
                        {"gbps", r.gbps},
                        {"gflops", r.gflops},
                        {"limit", r.limit},
                        {"limit_kind", r.limit_kind},
                        {"limit_fraction", r.limit_fraction},
                        {"constants", r.constants}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::string consts;
    for (const std::string& c : r.constants) consts += (consts.empty() ? "" : ", ") + c;
    std::printf("%s %s [%s] kernel %s, %d thread(s)%s%s\n", a.op.c_str(), a.dtype.c_str(),
                a.kase.c_str(), kernel.c_str(), r.threads,
                consts.empty() ? "" : ", constant operands: ", consts.c_str());
    std::printf("  min %.4f ms  median %.4f ms  (%d runs)\n", tm.min_ms, tm.median_ms, tm.repeats);
    std::printf("  %.2f GB/s  %.2f GFLOP/s  = %.1f%% of %s %.1f (measured now)\n", r.gbps, r.gflops,
                100 * r.limit_fraction, r.limit_kind.c_str(), r.limit);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench",
      "Time one case of an op; prints min/median and the fraction of this machine's limit");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("--op", a->op, "Op name")->required();
  cmd->add_option("--case", a->kase, "k=v,... (op-specific; generic ops take shape=AxBxC)");
  cmd->add_option("--dtype", a->dtype, "f32|bf16|f16|...")->capture_default_str();
  cmd->add_option("--threads", a->threads, "Threads (default OPSNN_NUM_THREADS or all cores)");
  cmd->add_option("--isa", a->isa, "Cap the ISA: scalar|avx2|avx512");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace opsnn::cli

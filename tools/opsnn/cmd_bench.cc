#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "opsnn/bench.h"
#include "opsnn/opsnn.h"

namespace opsnn::cli {
namespace {

struct BenchArgs {
  std::string op, dtype = "f32", isa;
  std::vector<std::string> kases;
  int threads = 0;
  bool json = false;
};

nlohmann::json to_json(const BenchResult& r, const std::string& dtype) {
  const Timing& tm = r.timing;
  return {{"op", r.op},
          {"case", r.kase},
          {"dtype", dtype},
          {"kernel", r.kernel},
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
}

void print_text(const BenchResult& r, const std::string& dtype) {
  const Timing& tm = r.timing;
  std::string consts;
  for (const std::string& c : r.constants) consts += (consts.empty() ? "" : ", ") + c;
  std::printf("%s %s [%s] kernel %s, %d thread(s)%s%s\n", r.op.c_str(), dtype.c_str(),
              r.kase.c_str(), r.kernel.c_str(), r.threads,
              consts.empty() ? "" : ", constant operands: ", consts.c_str());
  std::printf("  min %.4f ms  median %.4f ms  (%d runs)\n", tm.min_ms, tm.median_ms, tm.repeats);
  std::printf("  %.2f GB/s  %.2f GFLOP/s  = %.1f%% of %s %.1f (measured now)\n", r.gbps, r.gflops,
              100 * r.limit_fraction, r.limit_kind.c_str(), r.limit);
}

int run_bench(const BenchArgs& a) {
  if (!a.isa.empty()) set_isa_cap(isa_from_name(a.isa));
  const std::vector<std::string> kases = a.kases.empty() ? std::vector<std::string>{""} : a.kases;
  const std::vector<BenchResult> rs =
      bench_op_cases(a.op, kases, dtype_from_name(a.dtype), a.threads);
  const Timing& first = rs.front().timing;
  if (a.json) {
    if (rs.size() == 1) {
      std::printf("%s\n", to_json(rs.front(), a.dtype).dump(2).c_str());
      return 0;
    }
    nlohmann::json all = nlohmann::json::array();
    for (const BenchResult& r : rs) {
      nlohmann::json j = to_json(r, a.dtype);
      j["vs_first_min"] = r.timing.min_ms / first.min_ms;
      j["vs_first_median"] = r.timing.median_ms / first.median_ms;
      all.push_back(j);
    }
    std::printf("%s\n", all.dump(2).c_str());
    return 0;
  }
  for (const BenchResult& r : rs) print_text(r, a.dtype);
  if (rs.size() > 1) {
    std::printf("timed in the same rounds; time / the first case's:\n");
    for (const BenchResult& r : rs)
      std::printf("  %-40s min %.3f  median %.3f\n", r.kase.c_str(), r.timing.min_ms / first.min_ms,
                  r.timing.median_ms / first.median_ms);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench",
      "Time one case of an op (or several, interleaved); prints min/median and the fraction of "
      "this machine's limit");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("--op", a->op, "Op name")->required();
  cmd->add_option("--case", a->kases,
                  "k=v,... (op-specific; generic ops take shape=AxBxC); repeat --case to time "
                  "several cases in the same rounds and compare them")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--dtype", a->dtype, "f32|bf16|f16|...")->capture_default_str();
  cmd->add_option("--threads", a->threads, "Threads (default OPSNN_NUM_THREADS or all cores)");
  cmd->add_option("--isa", a->isa, "Cap the ISA: scalar|avx2|avx512");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace opsnn::cli

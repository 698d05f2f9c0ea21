#include <cstdio>
#include <string>

#include "commands.h"
#include "opsnn/check.h"
#include "opsnn/opsnn.h"

namespace opsnn::cli {
namespace {

struct CheckArgs {
  std::string op, dtype = "f32", isa, kernel;
  bool all = false, verbose = false, determinism = false;
};

int run_check(const CheckArgs& a) {
  if (!a.isa.empty()) set_isa_cap(isa_from_name(a.isa));
  if (a.op.empty() && !a.all) throw Error("check", "--op", "an op name or --all", "neither");
  std::vector<std::string> ops =
      a.all ? Registry::global().op_names() : std::vector<std::string>{a.op};
  std::vector<DType> dtypes;
  if (a.dtype == "all")
    dtypes = {DType::f32, DType::bf16, DType::f16};
  else
    dtypes = {dtype_from_name(a.dtype)};
  int failed = 0, passed = 0, declined = 0, skipped = 0;
  for (const std::string& op : ops) {
    const OpSchema& s = Registry::global().schema(op);
    for (DType t : dtypes) {
      bool supported = false;
      for (DType d : s.dtypes) supported |= d == t;
      if (!supported || !s.cases || !s.reference) {
        ++skipped;
        if (!a.all) std::printf("%s: no %s case table\n", op.c_str(), dtype_name(t));
        continue;
      }
      CheckOptions opt;
      opt.dtype = t;
      opt.kernel = a.kernel;
      opt.determinism = a.determinism;
      for (const CaseResult& r : check_op(op, opt)) {
        r.declined ? ++declined : r.passed ? ++passed : ++failed;
        if (a.verbose || (!r.passed && !r.declined) || !a.all)
          std::printf("%-4s %-14s %-5s %-26s %-26s max_abs %.3g max_rel %.3g%s%s\n",
                      r.declined ? "decl"
                      : r.passed ? "ok"
                                 : "FAIL",
                      op.c_str(), dtype_name(t), r.case_name.c_str(), r.kernel.c_str(),
                      r.max_abs_err, r.max_rel_err, r.message.empty() ? "" : "  ",
                      r.message.c_str());
      }
    }
  }
  if (declined)
    std::printf("%d passed, %d failed, %d declined by kernel '%s'\n", passed, failed, declined,
                a.kernel.c_str());
  else
    std::printf("%d passed, %d failed\n", passed, failed);
  (void)skipped;
  return failed ? 1 : 0;
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Run ops' case tables against the float64 reference");
  auto a = std::make_shared<CheckArgs>();
  cmd->add_option("--op", a->op, "Op name");
  cmd->add_flag("--all", a->all, "Every op");
  cmd->add_option("--dtype", a->dtype, "f32|bf16|f16|all")->capture_default_str();
  cmd->add_option("--isa", a->isa, "Cap the ISA: scalar|avx2|avx512");
  cmd->add_option("--kernel", a->kernel, "Force one kernel by name");
  cmd->add_flag("--determinism", a->determinism, "Also compare 1 vs 2 threads bit for bit");
  cmd->add_flag("-v,--verbose", a->verbose, "Print every case");
  cmd->callback([a] {
    int rc = run_check(*a);
    if (rc) throw CLI::RuntimeError(rc);
  });
}

}  // namespace opsnn::cli

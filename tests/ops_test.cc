// Every registered op's case table, for every kernel the active ISA allows,
// in f32, bf16 and f16, against the float64 reference; and bit-identical
// outputs for 1 and 2 threads. ctest runs this under OPSNN_ISA=scalar|avx2|avx512.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "opsnn/check.h"
#include "opsnn/opsnn.h"

namespace opsnn {
namespace {

struct Param {
  std::string op, kernel;
  DType dtype;
};

std::vector<Param> all_params() {
  std::vector<Param> ps;
  const Registry& reg = Registry::global();
  for (const std::string& op : reg.op_names()) {
    const OpSchema& s = reg.schema(op);
    if (!s.cases || !s.reference) continue;
    for (const KernelDesc& k : reg.kernels(op))
      for (DType t : s.dtypes)  // an optimised kernel that lists its dtypes is tested in those only
        if (k.priority == std::numeric_limits<int>::min() || k.dtypes.empty() ||
            std::find(k.dtypes.begin(), k.dtypes.end(), t) != k.dtypes.end())
          ps.push_back({op, k.name, t});
  }
  return ps;
}

class OpCheck : public ::testing::TestWithParam<Param> {};

TEST_P(OpCheck, MatchesFloat64Reference) {
  const Param& p = GetParam();
  for (const KernelDesc& k : Registry::global().kernels(p.op)) {
    if (k.name != p.kernel) continue;
    if (k.isa > active_isa() || (k.cpu_ok && !k.cpu_ok()))
      GTEST_SKIP() << p.kernel << " needs " << isa_name(k.isa) << " (active "
                   << isa_name(active_isa()) << ")";
  }
  CheckOptions opt;
  opt.dtype = p.dtype;
  opt.kernel = p.kernel;
  opt.determinism = true;
  int run = 0;
  for (const CaseResult& r : check_op(p.op, opt)) {
    // A kernel may decline a case (another kernel covers it); that is no failure.
    if (r.declined) continue;
    ++run;
    EXPECT_TRUE(r.passed) << p.op << " " << dtype_name(p.dtype) << " case " << r.case_name
                          << " kernel " << p.kernel << ": max_abs " << r.max_abs_err << " max_rel "
                          << r.max_rel_err << " " << r.message;
  }
  EXPECT_GT(run, 0) << p.kernel << " declined every case";
}

INSTANTIATE_TEST_SUITE_P(All, OpCheck, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return info.param.kernel + "_" + dtype_name(info.param.dtype);
                         });

}  // namespace
}  // namespace opsnn

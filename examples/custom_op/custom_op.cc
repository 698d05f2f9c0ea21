// Registering a custom operator: schema + shape inference + float64
// reference + an optimised kernel. Dispatch, `Op::create`, the checker (and
// so the tests and the CLI's check) then treat it like a built-in op.
//
//   scaled_swish(x; beta) = x * sigmoid(beta * x)
#include <cmath>
#include <cstdio>

#include "opsnn/check.h"
#include "opsnn/opsnn.h"
#include "scaled_swish.h"

using namespace opsnn;

int main() {
  register_scaled_swish(Registry::global());

  // Two-phase use: validate + pick the kernel once, run many times.
  Tensor x = Tensor::empty({8}, DType::f32);
  for (int64_t i = 0; i < 8; ++i) x.flat_set(i, static_cast<double>(i) - 4);
  Op op = Op::create("scaled_swish", {x.desc()}, {{"beta", 2.0}});
  Tensor y = Tensor::empty(op.outputs()[0].shape, DType::f32);
  op.run({&x, 1}, {&y, 1});
  std::printf("kernel %s\n", op.kernel_name().c_str());
  for (int64_t i = 0; i < 8; ++i)
    std::printf("scaled_swish(%+.0f) = %+.6f\n", x.flat_get(i), y.flat_get(i));

  // The checker runs its case table against the float64 reference.
  int failed = 0;
  for (const CaseResult& r : check_op("scaled_swish", {})) {
    std::printf("%s %s %s max_rel %.2g\n", r.passed ? "ok  " : "FAIL", r.case_name.c_str(),
                r.kernel.c_str(), r.max_rel_err);
    failed += !r.passed;
  }
  return failed ? 1 : 0;
}

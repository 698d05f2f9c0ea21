// Registering a custom operator: schema + shape inference + float64
// reference + an optimised kernel. Dispatch, `Op::create`, the checker (and
// so the tests and the CLI's check) then treat it like a built-in op.
//
//   scaled_swish(x; beta) = x * sigmoid(beta * x)
#include <cmath>
#include <cstdio>

#include "opsnn/check.h"
#include "opsnn/opsnn.h"

using namespace opsnn;

void register_scaled_swish(Registry& r) {
  OpSchema s;
  s.name = "scaled_swish";
  s.family = "custom";
  s.doc = "x * sigmoid(beta * x)";
  s.inputs = {{"x", "f32 tensor"}};
  s.outputs = {{"y", "same shape as x"}};
  s.attrs = {{"beta", AttrType::f64, 1.0, "slope inside the sigmoid"}};
  s.dtypes = {DType::f32};
  s.infer = [](const OpCall& call) {
    if (call.in(0).dtype != DType::f32) call.fail("input 'x'", "dtype f32", dtype_name(call.in(0).dtype));
    if (!(call.attrs.f("beta") > 0)) call.fail("attribute 'beta'", "> 0", std::to_string(call.attrs.f("beta")));
    return std::vector<TensorDesc>{TensorDesc(DType::f32, call.in(0).shape)};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const double beta = call.attrs.f("beta");
    for (size_t i = 0; i < in[0].data.size(); ++i) {
      const double x = in[0].data[i];
      out[0].data[i] = x / (1 + std::exp(-beta * x));
    }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    for (int64_t n : {0, 1, 17, 4096}) cs.push_back({"n" + std::to_string(n), {TensorDesc(t, {n})}, {{"beta", 1.5}}, {}});
    return cs;
  };
  r.add_op(std::move(s));

  KernelDesc k;
  k.name = "scaled_swish_threaded";
  k.isa = Isa::scalar;
  k.dtypes = {DType::f32};
  k.priority = 10;
  k.create = simple_kernel(
      [](const OpCall& call, const Tensor* in, Tensor* out, void*) {
        const float beta = static_cast<float>(call.attrs.f("beta"));
        const float* x = in[0].data_as<float>();
        float* y = out[0].data_as<float>();
        parallel_for(in[0].numel(), 4096, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) y[i] = x[i] / (1.0f + std::exp(-beta * x[i]));
        });
      },
      nullptr);
  r.add_kernel("scaled_swish", std::move(k));
}

int main() {
  register_scaled_swish(Registry::global());

  // Two-phase use: validate + pick the kernel once, run many times.
  Tensor x = Tensor::empty({8}, DType::f32);
  for (int64_t i = 0; i < 8; ++i) x.flat_set(i, static_cast<double>(i) - 4);
  Op op = Op::create("scaled_swish", {x.desc()}, {{"beta", 2.0}});
  Tensor y = Tensor::empty(op.outputs()[0].shape, DType::f32);
  op.run({&x, 1}, {&y, 1}, nullptr);
  std::printf("kernel %s\n", op.kernel_name().c_str());
  for (int64_t i = 0; i < 8; ++i) std::printf("scaled_swish(%+.0f) = %+.6f\n", x.flat_get(i), y.flat_get(i));

  // The checker runs its case table against the float64 reference.
  int failed = 0;
  for (const CaseResult& r : check_op("scaled_swish", {})) {
    std::printf("%s %s %s max_rel %.2g\n", r.passed ? "ok  " : "FAIL", r.case_name.c_str(), r.kernel.c_str(),
                r.max_rel_err);
    failed += !r.passed;
  }
  return failed ? 1 : 0;
}

// Registering a custom operator: schema + shape inference + float64
// reference + an optimised kernel. Dispatch, `Op::create`, the checker (and
// so the tests) and the `opsnn` CLI (through a plugin) treat it like a built-in.
#include "scaled_swish.h"

#include <cmath>

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
    if (call.in(0).dtype != DType::f32)
      call.fail("input 'x'", "dtype f32", dtype_name(call.in(0).dtype));
    if (!(call.attrs.f("beta") > 0))
      call.fail("attribute 'beta'", "> 0", std::to_string(call.attrs.f("beta")));
    return std::vector<TensorDesc>{TensorDesc(DType::f32, call.in(0).shape)};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in,
                   std::vector<RefTensor>& out) {
    const double beta = call.attrs.f("beta");
    for (size_t i = 0; i < in[0].data.size(); ++i) {
      const double x = in[0].data[i];
      out[0].data[i] = x / (1 + std::exp(-beta * x));
    }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    for (int64_t n : {0, 1, 17, 4096})
      cs.push_back({"n" + std::to_string(n), {TensorDesc(t, {n})}, {{"beta", 1.5}}, {}});
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

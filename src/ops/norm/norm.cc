// Registration of the normalisation family and helpers shared by its schemas.
#include <cmath>
#include <cstring>

#include "ops/builtin_ops.h"
#include "ops/common/checks.h"
#include "ops/norm/norm_util.h"
#include "opsnn/error.h"

namespace opsnn {
namespace norm {

void to_f32(const Tensor& t, float* dst) {
  const size_t n = static_cast<size_t>(t.numel());
  switch (t.dtype()) {
    case DType::f32:
      if (n) std::memcpy(dst, t.data(), n * sizeof(float));
      return;
    case DType::bf16:
      return convert_bf16_to_f32(t.data_as<bf16>(), dst, n);
    case DType::f16:
      return convert_f16_to_f32(t.data_as<f16>(), dst, n);
    default:
      throw Error("norm", "parameter", "a float tensor", dtype_name(t.dtype()));
  }
}

size_t floats_bytes(int64_t n) { return (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64; }

float eps_of(const OpCall& call) {
  const double e = call.attrs.f("eps");
  if (!(e >= 0) || !std::isfinite(e))
    call.fail("attribute 'eps'", "a finite value >= 0", std::to_string(e));
  return static_cast<float>(e);
}

void require_param(const OpCall& call, size_t i, const Shape& shape, const std::string& what) {
  ops::require_float(call, i);
  if (call.in(i).shape != shape)
    call.fail(ops::input_name(call, i), "shape " + shape_str(shape) + " (" + what + ")",
              shape_str(call.in(i).shape));
}

void io_cost(const OpCall& call, double* bytes, double* flops) {
  double b = 0;
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (call.has_input(i))
      b += static_cast<double>(call.in(i).numel()) *
           static_cast<double>(dtype_size(call.in(i).dtype));
  for (const TensorDesc& o : call.outputs)
    b += static_cast<double>(o.numel()) * static_cast<double>(dtype_size(o.dtype));
  *bytes = b;
  *flops = 0;
}

ops::PerIsa<Fns> isa_fns() { return {fns_avx512(), fns_avx2(), fns_scalar()}; }

}  // namespace norm

void register_norm_ops(Registry& r) {
  norm::register_row_norms(r);
  norm::register_channel_norms(r);
}

}  // namespace opsnn

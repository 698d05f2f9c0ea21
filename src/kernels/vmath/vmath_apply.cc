#include "kernels/simd/vec_scalar.h"
#include "kernels/vmath/vmath.h"

namespace opsnn::simd::scalar {
#include "kernels/vmath/vmath_apply_impl.h"
}  // namespace opsnn::simd::scalar

namespace opsnn::vmath {

namespace detail {
void apply_scalar(Fn f, const float* x, float* y, int64_t n) {
  simd::scalar::vmath_apply(f, x, y, n);
}
}  // namespace detail

const char* fn_name(Fn f) {
  switch (f) {
    case Fn::exp:
      return "exp";
    case Fn::log:
      return "log";
    case Fn::erf:
      return "erf";
    case Fn::tanh:
      return "tanh";
    case Fn::sigmoid:
      return "sigmoid";
    case Fn::erf_fast:
      return "erf_fast";
    case Fn::exp_nonpos:
      return "exp_nonpos";
  }
  return "?";
}

ArrayFn array_fn(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return &detail::apply_avx512;
    case Isa::avx2:
      return &detail::apply_avx2;
    case Isa::scalar:
      break;
  }
  return &detail::apply_scalar;
}

}  // namespace opsnn::vmath

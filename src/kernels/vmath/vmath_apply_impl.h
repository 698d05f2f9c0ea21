// The loop behind vmath::array_fn, written once over the vec_*.h names and
// included inside each ISA namespace by vmath_apply_{scalar,avx2,avx512}.cc.

template <vmath::Fn F>
inline Vf vmath_call(Vf x) {
  if constexpr (F == vmath::Fn::exp) return vexp(x);
  if constexpr (F == vmath::Fn::log) return vlog(x);
  if constexpr (F == vmath::Fn::erf) return verf(x);
  if constexpr (F == vmath::Fn::tanh) return vtanh(x);
  if constexpr (F == vmath::Fn::sigmoid) return vsigmoid(x);
  if constexpr (F == vmath::Fn::erf_fast) return verf_fast(x);
  if constexpr (F == vmath::Fn::exp_nonpos) return vexp_nonpos(x);
}

template <vmath::Fn F>
void vmath_apply_fn(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, vmath_call<F>(load(x + i)));
  if (i < n) {
    const int r = static_cast<int>(n - i);
    store_n(y + i, vmath_call<F>(load_n(x + i, r)), r);
  }
}

inline void vmath_apply(vmath::Fn f, const float* x, float* y, int64_t n) {
  switch (f) {
    case vmath::Fn::exp:
      return vmath_apply_fn<vmath::Fn::exp>(x, y, n);
    case vmath::Fn::log:
      return vmath_apply_fn<vmath::Fn::log>(x, y, n);
    case vmath::Fn::erf:
      return vmath_apply_fn<vmath::Fn::erf>(x, y, n);
    case vmath::Fn::tanh:
      return vmath_apply_fn<vmath::Fn::tanh>(x, y, n);
    case vmath::Fn::sigmoid:
      return vmath_apply_fn<vmath::Fn::sigmoid>(x, y, n);
    case vmath::Fn::erf_fast:
      return vmath_apply_fn<vmath::Fn::erf_fast>(x, y, n);
    case vmath::Fn::exp_nonpos:
      return vmath_apply_fn<vmath::Fn::exp_nonpos>(x, y, n);
  }
}

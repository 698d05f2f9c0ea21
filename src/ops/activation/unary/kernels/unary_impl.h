// Unary kernels written once over the vec_*.h names; included by
// unary_{scalar,avx2,avx512}.cc inside their ISA namespace.

template <unary::Kind K>
inline Vf apply(Vf x, const unary::Params& p) {
  using unary::Kind;
  const Vf one = set1(1.0f);
  if constexpr (K == Kind::relu) return max(x, zero());
  if constexpr (K == Kind::leaky_relu) return select(x < zero(), x * set1(p.alpha), x);
  if constexpr (K == Kind::gelu_erf)
    return x * set1(0.5f) * (one + verf(x * set1(0.70710678118654752f)));
  if constexpr (K == Kind::gelu_tanh) {
    Vf inner = set1(0.7978845608028654f) * fma(set1(0.044715f) * x, x * x, x);
    return x * set1(0.5f) * (one + vtanh(inner));
  }
  if constexpr (K == Kind::quick_gelu) return x * vsigmoid(x * set1(1.702f));
  if constexpr (K == Kind::silu) return x * vsigmoid(x);
  if constexpr (K == Kind::sigmoid) return vsigmoid(x);
  if constexpr (K == Kind::tanh) return vtanh(x);
  if constexpr (K == Kind::exp) return vexp(x);
  if constexpr (K == Kind::log) return vlog(x);
  if constexpr (K == Kind::sqrt) return sqrt(x);
  if constexpr (K == Kind::rsqrt) return one / sqrt(x);
  if constexpr (K == Kind::reciprocal) return one / x;
  if constexpr (K == Kind::neg) return -x;
  if constexpr (K == Kind::abs) return abs(x);
  if constexpr (K == Kind::erf) return verf(x);
  if constexpr (K == Kind::softplus) {
    // log(1 + e^x) = max(x, 0) + log(1 + e^-|x|)
    return max(x, zero()) + vlog(one + vexp(-abs(x)));
  }
  if constexpr (K == Kind::mish) {
    Vf sp = max(x, zero()) + vlog(one + vexp(-abs(x)));
    return x * vtanh(sp);
  }
  if constexpr (K == Kind::hardswish)
    return x * min(max(x + set1(3.0f), zero()), set1(6.0f)) * set1(1.0f / 6.0f);
  if constexpr (K == Kind::clip) return min(max(x, set1(p.alpha)), set1(p.beta));
}

template <unary::Kind K, class T>
void run_typed(const T* x, T* y, int64_t n, const unary::Params& p) {
  // Grain is a multiple of the vector width: every element is computed by the
  // same vector code whatever the thread count (bit-identical results).
  parallel_for(n, 16384, [&](int64_t b, int64_t e) {
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes) store(y + i, apply<K>(load(x + i), p));
    if (i < e) {
      const int r = static_cast<int>(e - i);
      store_n(y + i, apply<K>(load_n(x + i, r), p), r);
    }
  });
}

template <unary::Kind K>
void run_kind(DType t, const void* x, void* y, int64_t n, const unary::Params& p) {
  switch (t) {
    case DType::f32:
      return run_typed<K>(static_cast<const float*>(x), static_cast<float*>(y), n, p);
    case DType::bf16:
      return run_typed<K>(static_cast<const bf16*>(x), static_cast<bf16*>(y), n, p);
    case DType::f16:
      return run_typed<K>(static_cast<const f16*>(x), static_cast<f16*>(y), n, p);
    default:
      return;
  }
}

inline void run(unary::Kind kind, DType t, const void* x, void* y, int64_t n,
                const unary::Params& p) {
  using unary::Kind;
  switch (kind) {
#define OPSNN_UNARY_CASE(k) \
  case Kind::k:             \
    return run_kind<Kind::k>(t, x, y, n, p);
    OPSNN_UNARY_CASE(relu)
    OPSNN_UNARY_CASE(leaky_relu)
    OPSNN_UNARY_CASE(gelu_erf)
    OPSNN_UNARY_CASE(gelu_tanh)
    OPSNN_UNARY_CASE(quick_gelu)
    OPSNN_UNARY_CASE(silu)
    OPSNN_UNARY_CASE(sigmoid)
    OPSNN_UNARY_CASE(tanh)
    OPSNN_UNARY_CASE(exp)
    OPSNN_UNARY_CASE(log)
    OPSNN_UNARY_CASE(sqrt)
    OPSNN_UNARY_CASE(rsqrt)
    OPSNN_UNARY_CASE(reciprocal)
    OPSNN_UNARY_CASE(neg)
    OPSNN_UNARY_CASE(abs)
    OPSNN_UNARY_CASE(erf)
    OPSNN_UNARY_CASE(softplus)
    OPSNN_UNARY_CASE(mish)
    OPSNN_UNARY_CASE(hardswish)
    OPSNN_UNARY_CASE(clip)
#undef OPSNN_UNARY_CASE
  }
}

// Unary kernels written once over the vec_*.h names; included by
// unary_{scalar,avx2,avx512}.cc inside their ISA namespace.

#include "kernels/act/act_vec.inc"  // exp_in_range, silu_fast, the gelu forms

// log(1 + u) for u in [0, 1]: 2 atanh(s) with s = u / (2 + u) in [0, 1/3],
// 2 s (1 + s^2/3 + ... + s^12/13); truncation below 2e-8 relative, and
// relative accuracy kept for tiny u (no 1 + u rounding).
inline Vf log1p_unit(Vf u) {
  const Vf s = u / (set1(2.0f) + u);
  static constexpr float c[] = {1.0f, 1 / 3.0f, 1 / 5.0f, 1 / 7.0f, 1 / 9.0f, 1 / 11.0f, 1 / 13.0f};
  return (s + s) * poly(s * s, c);
}

// Operand order matters: max/min return their second operand when either is
// NaN (x86 maxps/minps, mirrored by vec_scalar.h), so x goes second to propagate it.
inline Vf max_keep_nan(Vf x, Vf c) { return max(c, x); }
inline Vf min_keep_nan(Vf x, Vf c) { return min(c, x); }

template <unary::Kind K>
inline Vf apply(Vf x, const unary::Params& p) {
  using unary::Kind;
  const Vf one = set1(1.0f);
  if constexpr (K == Kind::relu) return max_keep_nan(x, zero());
  if constexpr (K == Kind::leaky_relu) return select(x < zero(), x * set1(p.alpha), x);
  if constexpr (K == Kind::gelu_erf) return act_gelu_erf(x);
  if constexpr (K == Kind::gelu_tanh) return act_gelu_tanh(x);
  if constexpr (K == Kind::quick_gelu) return silu_fast(x, 1.702f);
  if constexpr (K == Kind::silu) return act_silu(x);
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
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|); 0 below -87 (the true value
    // is under 1.7e-38) and at -inf.
    Vf u = exp_in_range(max(set1(-87.0f), -abs(x)));  // NaN kept (second operand)
    return select(x < set1(-87.0f), zero(), max(x, zero()) + log1p_unit(u));
  }
  if constexpr (K == Kind::mish) {
    // x tanh(log(1 + e^x)) = x n / (n + 2) with n = e^x (e^x + 2): one exp and one
    // division. Above 20 the factor rounds to 1 (x is clamped so n stays finite);
    // below -87 the result is under 1.5e-36 in magnitude: -0 (down to -inf).
    Vf e = exp_in_range(min(set1(20.0f), max(set1(-87.0f), x)));  // NaN kept
    Vf n = e * (e + set1(2.0f));
    return select(x < set1(-87.0f), set1(-0.0f), x * (n / (n + set1(2.0f))));
  }
  if constexpr (K == Kind::hardswish)
    // 0 below -3 (down to -inf); the factor in [0, 1] first so x = FLT_MAX stays finite.
    return select(x <= set1(-3.0f), zero(),
                  x * (min(max(x + set1(3.0f), zero()), set1(6.0f)) * set1(1.0f / 6.0f)));
  if constexpr (K == Kind::clip) return min_keep_nan(max_keep_nan(x, set1(p.alpha)), set1(p.beta));
  if constexpr (K == Kind::floor) return floor(x);
  if constexpr (K == Kind::ceil) return -floor(-x);
  if constexpr (K == Kind::round) return round(x);  // halves to even
  if constexpr (K == Kind::sign)                    // 0, -0 and NaN pass through
    return select(x > zero(), one, select(x < zero(), -one, x));
}

// kStreamBytes (f32 outputs of at least this size are written with
// non-temporal stores) and prefetch_bytes.
#include "ops/common/stream_kernels.inc"

// Software prefetch distance on x. Transcendental ops consume a cache line
// every few ns, slowly enough that the hardware prefetchers stay too close
// and the loads wait on memory (silu at 64 MiB ran at 1.9x its in-cache time
// per element on a Xeon, the two costs added instead of overlapping).
inline constexpr int64_t kPrefetchBytes = 4096;

template <class T>
inline void prefetch_ahead(const T* p) {
  prefetch_bytes(reinterpret_cast<const char*>(p) + kPrefetchBytes, 2 * kLanes * sizeof(T));
}

template <unary::Kind K, class T>
void run_typed(const T* x, T* y, int64_t n, const unary::Params& p) {
  bool nt = false;
  if constexpr (std::is_same_v<T, float>)
    nt = kLanes > 1 && n * 4 >= kStreamBytes && reinterpret_cast<uintptr_t>(y) % 64 == 0;
  // Grain is a multiple of the vector width (and of 64 bytes): every element
  // is computed by the same vector code whatever the thread count
  // (bit-identical results), and chunks of an aligned y start aligned.
  parallel_for(n, 16384, [&](int64_t b, int64_t e) {
    int64_t i = b;
    if constexpr (std::is_same_v<T, float>) {
      if (nt) {
        for (; i + 2 * kLanes <= e; i += 2 * kLanes) {
          prefetch_ahead(x + i);
          Vf a = apply<K>(load(x + i), p), c = apply<K>(load(x + i + kLanes), p);
          stream(y + i, a);
          stream(y + i + kLanes, c);
        }
        stream_fence();
      }
    }
    // Lane-wise pairs: bf16 in the unpack order its loads and stores are
    // cheaper in (vec_avx2.h), the same operations on every element.
    const T* xi = x + i;
    map_lanewise(
        xi, y + i, e - i, [&](Vf v) { return apply<K>(v, p); },
        [&](int64_t j) { prefetch_ahead(xi + j); });
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
    OPSNN_UNARY_CASE(floor)
    OPSNN_UNARY_CASE(ceil)
    OPSNN_UNARY_CASE(round)
    OPSNN_UNARY_CASE(sign)
#undef OPSNN_UNARY_CASE
  }
}

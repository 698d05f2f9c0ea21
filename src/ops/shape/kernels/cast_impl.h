// cast kernels written once over the vec_*.h names; included by
// cast_{scalar,avx2,avx512}.cc inside their ISA namespace.
//
// Rules (the float64 reference applies the same ones):
//   float -> float  : through f32, round to nearest even (NaN stays NaN, overflow -> Inf)
//   float -> integer: NaN -> 0, truncate toward zero, saturate to the type's range
//   integer -> float: to f32 (nearest even), then to bf16/f16 (nearest even)
//   integer -> integer: saturate to the target's range
//   any -> bool     : x != 0 (NaN -> true);  bool -> any: 0 or 1

namespace castk {

struct Bool8 {
  uint8_t v;
};

template <class T>
inline constexpr bool is_f =
    std::is_same_v<T, float> || std::is_same_v<T, bf16> || std::is_same_v<T, f16>;

template <class T>
inline auto num(T x) {
  if constexpr (std::is_same_v<T, float>)
    return x;
  else if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, f16>)
    return ::opsnn::to_f32(x);
  else if constexpr (std::is_same_v<T, Bool8>)
    return static_cast<int32_t>(x.v != 0);
  else
    return x;
}

template <class I, class X>
inline I sat(X x) {
  using L = std::numeric_limits<I>;
  if constexpr (std::is_floating_point_v<X>) {
    if (x != x) return 0;
    if (x <= static_cast<X>(L::min())) return L::min();
    if (x >= static_cast<X>(L::max())) return L::max();
    return static_cast<I>(x);
  } else {
    if constexpr (std::is_signed_v<X> && std::is_unsigned_v<I>) {
      if (x < 0) return 0;
    }
    if constexpr (sizeof(X) > sizeof(I) ||
                  (std::is_unsigned_v<X> && std::is_signed_v<I> && sizeof(X) == sizeof(I))) {
      if (x > static_cast<X>(L::max())) return L::max();
    }
    if constexpr (std::is_signed_v<X> && std::is_signed_v<I> && sizeof(X) > sizeof(I)) {
      if (x < static_cast<X>(L::min())) return L::min();
    }
    return static_cast<I>(x);
  }
}

template <class D, class X>
inline D make(X x) {
  if constexpr (std::is_same_v<D, Bool8>)
    return Bool8{static_cast<uint8_t>(x != 0)};
  else if constexpr (std::is_same_v<D, float>)
    return static_cast<float>(x);
  else if constexpr (std::is_same_v<D, bf16>)
    return ::opsnn::to_bf16(static_cast<float>(x));
  else if constexpr (std::is_same_v<D, f16>)
    return ::opsnn::to_f16(static_cast<float>(x));
  else
    return sat<D>(x);
}

template <class S, class D>
void conv(const void* src, void* dst, int64_t n) {
  const S* s = static_cast<const S*>(src);
  D* d = static_cast<D*>(dst);
  if constexpr (std::is_same_v<S, D>) {
    std::memcpy(d, s, static_cast<size_t>(n) * sizeof(S));
  } else if constexpr (is_f<S> && is_f<D>) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) store(d + i, load(s + i));
    if (i < n) store_n(d + i, load_n(s + i, static_cast<int>(n - i)), static_cast<int>(n - i));
  } else if constexpr (is_f<S> && kLanes > 1 &&
                       (std::is_same_v<D, int32_t> || std::is_same_v<D, int8_t> ||
                        std::is_same_v<D, uint8_t>)) {
    // Saturating float -> int: NaN -> 0, clamp, truncate; i32 overflow lanes
    // (cvtt gives INT_MIN) are turned into INT_MAX by adding -1.
    constexpr bool i32 = std::is_same_v<D, int32_t>;
    const Vf lo = set1(i32 ? -2147483648.0f : static_cast<float>(std::numeric_limits<D>::min()));
    const Vf hi = set1(static_cast<float>(std::numeric_limits<D>::max()));
    const Vf big = set1(2147483648.0f), ones = from_bits(set1i(-1));
    alignas(64) int32_t tmp[kLanes];
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      Vf x = load(s + i);
      const Mask nan = isnan(x);
      Vi v;
      if constexpr (i32) {
        const Vf c = select(nan, zero(), max(x, lo));
        v = cvt_trunc(c) + bits(select(c >= big, ones, zero()));
        store(reinterpret_cast<float*>(d + i), from_bits(v));
      } else {
        v = cvt_trunc(select(nan, zero(), min(max(x, lo), hi)));
        store(reinterpret_cast<float*>(tmp), from_bits(v));
        for (int k = 0; k < kLanes; ++k) d[i + k] = static_cast<D>(tmp[k]);
      }
    }
    for (; i < n; ++i) d[i] = make<D>(num(s[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = make<D>(num(s[i]));
  }
}

template <class S>
cast::ConvFn row(DType to) {
  switch (to) {
    case DType::f32:
      return conv<S, float>;
    case DType::f16:
      return conv<S, f16>;
    case DType::bf16:
      return conv<S, bf16>;
    case DType::i8:
      return conv<S, int8_t>;
    case DType::u8:
      return conv<S, uint8_t>;
    case DType::i32:
      return conv<S, int32_t>;
    case DType::i64:
      return conv<S, int64_t>;
    case DType::boolean:
      return conv<S, Bool8>;
  }
  return nullptr;
}

inline cast::ConvFn table(DType from, DType to) {
  switch (from) {
    case DType::f32:
      return row<float>(to);
    case DType::f16:
      return row<f16>(to);
    case DType::bf16:
      return row<bf16>(to);
    case DType::i8:
      return row<int8_t>(to);
    case DType::u8:
      return row<uint8_t>(to);
    case DType::i32:
      return row<int32_t>(to);
    case DType::i64:
      return row<int64_t>(to);
    case DType::boolean:
      return row<Bool8>(to);
  }
  return nullptr;
}

}  // namespace castk

// Binary kernels written once over the vec_*.h names; included by
// binary_{scalar,avx2,avx512}.cc inside their ISA namespace.
//
// The broadcast plan leaves an inner run of n outputs where each input either
// advances with the output (stride 1) or stays on one element (stride 0).
// Each output element is computed by the same lane arithmetic whatever the
// chunking, so results do not depend on the thread count.

template <binary::Kind K>
inline Vf apply(Vf a, Vf b) {
  using binary::Kind;
  if constexpr (K == Kind::add) return a + b;
  if constexpr (K == Kind::sub) return a - b;
  if constexpr (K == Kind::mul) return a * b;
  if constexpr (K == Kind::div) return a / b;
  if constexpr (K == Kind::maximum) return select(isnan(a), a, max(a, b));  // NaN propagates
  if constexpr (K == Kind::minimum) return select(isnan(a), a, min(a, b));
  if constexpr (K == Kind::pow) {
    // |a|^b = exp(b log|a|); negative a: odd integer b flips the sign,
    // non-integer b gives NaN; pow(x, 0) = pow(1, y) = 1 (C/NumPy rules).
    const Vf one = set1(1.0f);
    Vf r = vexp(b * vlog(abs(a)));
    const Vf half = b * set1(0.5f);
    const Mask odd = (half - floor(half)) == set1(0.5f);
    const Mask nonint = (b - floor(b)) > zero();
    const Mask neg = a < zero();
    const Mask sign = neg | ((a == zero()) & (one / a < zero()));  // -0: pow(-0, -3) = -inf
    r = select(sign & odd, -r, r);
    // pow(-inf, b) is exp(b * log(inf)) (inf or 0), not NaN; pow(-1, +-inf) = 1.
    r = select(neg & nonint & (a > set1(-__builtin_inff())), set1(__builtin_nanf("")), r);
    const Mask minus_one_inf = (a == -one) & (abs(b) == set1(__builtin_inff()));
    return select((b == zero()) | (a == one) | minus_one_inf, one, r);
  }
}

template <class T>
inline float scalar_of(const T* p) {
  return to_f32(*p);
}

// One inner run: sa, sb in {0, 1}.
template <binary::Kind K, class T>
inline void run_inner(const T* a, int64_t sa, const T* b, int64_t sb, T* y, int64_t n) {
  int64_t i = 0;
  // Lane-wise pairs first: bf16 in the unpack order its loads and stores are
  // cheaper in (vec_avx2.h), the same operations on every element.
  Vf u0, u1, v0, v1;
  if (sa && sb) {
    for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
      load_lanewise_pair(a + i, u0, u1);
      load_lanewise_pair(b + i, v0, v1);
      store_lanewise_pair(y + i, apply<K>(u0, v0), apply<K>(u1, v1));
    }
    for (; i + kLanes <= n; i += kLanes) store(y + i, apply<K>(load(a + i), load(b + i)));
    if (i < n) {
      const int r = static_cast<int>(n - i);
      store_n(y + i, apply<K>(load_n(a + i, r), load_n(b + i, r)), r);
    }
  } else if (sa) {
    const Vf vb = set1(scalar_of(b));
    for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
      load_lanewise_pair(a + i, u0, u1);
      store_lanewise_pair(y + i, apply<K>(u0, vb), apply<K>(u1, vb));
    }
    for (; i + kLanes <= n; i += kLanes) store(y + i, apply<K>(load(a + i), vb));
    if (i < n) {
      const int r = static_cast<int>(n - i);
      store_n(y + i, apply<K>(load_n(a + i, r), vb), r);
    }
  } else if (sb) {
    const Vf va = set1(scalar_of(a));
    for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
      load_lanewise_pair(b + i, v0, v1);
      store_lanewise_pair(y + i, apply<K>(va, v0), apply<K>(va, v1));
    }
    for (; i + kLanes <= n; i += kLanes) store(y + i, apply<K>(va, load(b + i)));
    if (i < n) {
      const int r = static_cast<int>(n - i);
      store_n(y + i, apply<K>(va, load_n(b + i, r)), r);
    }
  } else {
    const Vf v = apply<K>(set1(scalar_of(a)), set1(scalar_of(b)));
    for (; i + kLanes <= n; i += kLanes) store(y + i, v);
    if (i < n) store_n(y + i, v, static_cast<int>(n - i));
  }
}

// Same-shape f32 with non-temporal stores: the output is too big to stay in
// cache, so skip the read-for-ownership of each output line.
template <binary::Kind K>
inline void run_stream(const float* a, const float* b, float* y, int64_t n) {
  int64_t i = 0;
  const int64_t mis = static_cast<int64_t>((reinterpret_cast<uintptr_t>(y) % 64) / sizeof(float));
  int64_t head = mis ? std::min<int64_t>(n, 16 - mis) : 0;
  while (i < head) {  // peel to a 64-byte boundary
    const int r = static_cast<int>(std::min<int64_t>(head - i, kLanes));
    store_n(y + i, apply<K>(load_n(a + i, r), load_n(b + i, r)), r);
    i += r;
  }
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const Vf r0 = apply<K>(load(a + i), load(b + i));
    const Vf r1 = apply<K>(load(a + i + kLanes), load(b + i + kLanes));
    stream(y + i, r0);
    stream(y + i + kLanes, r1);
  }
  for (; i + kLanes <= n; i += kLanes) stream(y + i, apply<K>(load(a + i), load(b + i)));
  if (i < n) {
    const int r = static_cast<int>(n - i);
    store_n(y + i, apply<K>(load_n(a + i, r), load_n(b + i, r)), r);
  }
  if constexpr (kLanes > 1) __builtin_ia32_sfence();
}

inline constexpr int64_t kStreamBytes = int64_t{8} << 20;
inline constexpr int64_t kGrain = 16384;  // elements per chunk, a multiple of every kLanes

template <binary::Kind K, class T>
void run_typed(const ops::BroadcastPlan& p, const T* a, const T* b, T* y) {
  if (p.numel == 0) return;
  const int64_t inner = p.inner();
  const int64_t sa = p.strides[0].back(), sb = p.strides[1].back();
  if (p.dims.size() == 1) {
    const bool nt = std::is_same_v<T, float> && sa && sb &&
                    p.numel * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
    parallel_for(inner, kGrain, [&](int64_t b0, int64_t e) {
      if constexpr (std::is_same_v<T, float>) {
        if (nt) return run_stream<K>(a + b0, b + b0, y + b0, e - b0);
      }
      run_inner<K>(a + b0 * sa, sa, b + b0 * sb, sb, y + b0, e - b0);
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(inner, 1));
  parallel_for(p.rows(), grain, [&](int64_t r0, int64_t r1) {
    ops::RowWalker<2> w(p, r0);
    for (int64_t r = r0; r < r1; ++r, w.next())
      run_inner<K>(a + w.off[0], sa, b + w.off[1], sb, y + r * inner, inner);
  });
}

template <binary::Kind K>
void run_kind(DType t, const ops::BroadcastPlan& p, const void* a, const void* b, void* y) {
  switch (t) {
    case DType::f32:
      return run_typed<K>(p, static_cast<const float*>(a), static_cast<const float*>(b),
                          static_cast<float*>(y));
    case DType::bf16:
      return run_typed<K>(p, static_cast<const bf16*>(a), static_cast<const bf16*>(b),
                          static_cast<bf16*>(y));
    case DType::f16:
      return run_typed<K>(p, static_cast<const f16*>(a), static_cast<const f16*>(b),
                          static_cast<f16*>(y));
    default:
      return;
  }
}

inline void run(binary::Kind kind, DType t, const ops::BroadcastPlan& p, const void* a,
                const void* b, void* y) {
  using binary::Kind;
  switch (kind) {
#define OPSNN_BINARY_CASE(k) \
  case Kind::k:              \
    return run_kind<Kind::k>(t, p, a, b, y);
    OPSNN_BINARY_CASE(add)
    OPSNN_BINARY_CASE(sub)
    OPSNN_BINARY_CASE(mul)
    OPSNN_BINARY_CASE(div)
    OPSNN_BINARY_CASE(pow)
    OPSNN_BINARY_CASE(maximum)
    OPSNN_BINARY_CASE(minimum)
#undef OPSNN_BINARY_CASE
  }
}

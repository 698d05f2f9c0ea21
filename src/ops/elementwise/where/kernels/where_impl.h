// where kernels written once over the vec_*.h names; included by
// where_{scalar,avx2,avx512}.cc inside their ISA namespace.

// Lanes [0, n) of a byte condition as a mask (nonzero = true).
inline Mask cond_mask(const uint8_t* c, int n) {
  alignas(64) float tmp[kLanes];
  for (int j = 0; j < kLanes; ++j) tmp[j] = j < n && c[j] ? 1.0f : 0.0f;
  return load(tmp) > zero();
}

// n values of p with stride s in {0, 1}, starting at element i.
template <class T>
inline Vf load_s(const T* p, int64_t s, int64_t i, int n) {
  if (!s) return set1(to_f32(*p));
  return n == kLanes ? load(p + i) : load_n(p + i, n);
}

template <class T>
void run_inner(const uint8_t* c, int64_t sc, const T* a, int64_t sa, const T* b, int64_t sb, T* y,
               int64_t n) {
  const bool cval = !sc && *c;
  for (int64_t i = 0; i < n; i += kLanes) {
    const int r = static_cast<int>(std::min<int64_t>(kLanes, n - i));
    Vf v;
    if (sc)
      v = select(cond_mask(c + i, r), load_s(a, sa, i, r), load_s(b, sb, i, r));
    else
      v = cval ? load_s(a, sa, i, r) : load_s(b, sb, i, r);
    if (r == kLanes)
      store(y + i, v);
    else
      store_n(y + i, v, r);
  }
}

template <class T>
void run_typed(const ops::BroadcastPlan& p, const uint8_t* c, const T* a, const T* b, T* y) {
  if (p.numel == 0) return;
  const int64_t inner = p.inner();
  const int64_t sc = p.strides[0].back(), sa = p.strides[1].back(), sb = p.strides[2].back();
  if (p.dims.size() == 1) {
    parallel_for(inner, 16384, [&](int64_t b0, int64_t e) {
      run_inner(c + b0 * sc, sc, a + b0 * sa, sa, b + b0 * sb, sb, y + b0, e - b0);
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1));
  parallel_for(p.rows(), grain, [&](int64_t r0, int64_t r1) {
    ops::RowWalker<3> w(p, r0);
    for (int64_t r = r0; r < r1; ++r, w.next())
      run_inner(c + w.off[0], sc, a + w.off[1], sa, b + w.off[2], sb, y + r * inner, inner);
  });
}

inline void run(DType t, const ops::BroadcastPlan& p, const uint8_t* c, const void* a,
                const void* b, void* y) {
  switch (t) {
    case DType::f32:
      return run_typed(p, c, static_cast<const float*>(a), static_cast<const float*>(b),
                       static_cast<float*>(y));
    case DType::bf16:
      return run_typed(p, c, static_cast<const bf16*>(a), static_cast<const bf16*>(b),
                       static_cast<bf16*>(y));
    case DType::f16:
      return run_typed(p, c, static_cast<const f16*>(a), static_cast<const f16*>(b),
                       static_cast<f16*>(y));
    default:
      return;
  }
}

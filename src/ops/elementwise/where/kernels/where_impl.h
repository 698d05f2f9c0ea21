// where kernels written once over the vec_*.h names; included by
// where_{scalar,avx2,avx512}.cc inside their ISA namespace.

// n values of p with stride s in {0, 1}, starting at element i.
template <class T>
inline Vf load_s(const T* p, int64_t s, int64_t i, int n) {
  if (!s) return set1(to_f32(*p));
  return n == kLanes ? load(p + i) : load_n(p + i, n);
}

template <class T>
void run_inner(const uint8_t* c, int64_t sc, const T* a, int64_t sa, const T* b, int64_t sb, T* y,
               int64_t n) {
  auto put = [&](int64_t i, int r, Vf v) {
    if (r == kLanes)
      store(y + i, v);
    else
      store_n(y + i, v, r);
  };
  if (!sc) {  // one condition for the whole run
    const bool cv = *c != 0;
    for (int64_t i = 0; i < n; i += kLanes) {
      const int r = static_cast<int>(std::min<int64_t>(kLanes, n - i));
      put(i, r, cv ? load_s(a, sa, i, r) : load_s(b, sb, i, r));
    }
    return;
  }
  // Condition bytes widened to 0/1 floats a block at a time (a loop the
  // compiler vectorises for the file's ISA), then compared into lane masks.
  constexpr int64_t kBlk = 256;
  alignas(64) float cf[kBlk];
  for (int64_t i0 = 0; i0 < n; i0 += kBlk) {
    const int64_t m = std::min(kBlk, n - i0);
    for (int64_t j = 0; j < m; ++j) cf[j] = c[i0 + j] != 0 ? 1.0f : 0.0f;
    for (int64_t j = 0; j < m; j += kLanes) {
      const int r = static_cast<int>(std::min<int64_t>(kLanes, m - j));
      const Mask mk = (r == kLanes ? load(cf + j) : load_n(cf + j, r)) > zero();
      put(i0 + j, r, select(mk, load_s(a, sa, i0 + j, r), load_s(b, sb, i0 + j, r)));
    }
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

// The depthwise kernel written once over the vec_*.h names; included by
// depthwise_{scalar,avx2,avx512}.cc inside their ISA namespace. Each output
// is bias + the taps' products summed in the reference's order (kd, kh, kw),
// one f32 FMA each, so every thread split gives the same bits.

namespace dw_k {

using conv::DepthwiseArgs;
using conv::Window;
inline constexpr int kPix = 4;  // output pixels per register tile

// NV channel vectors (the last one partial when Tail) of one output row.
template <class T, act::Kind K, int NV, bool Tail>
struct Channels {
  const DepthwiseArgs& a;
  const T* const* rows;  // per (kd, kh): the input row, null in the padding
  int64_t nrows;
  T* yr;
  const T* rr;  // residual row or null
  int64_t c0;
  int nl;  // channels in the last vector (kLanes unless Tail)

  Vf ld(const T* p, int v) const {
    if constexpr (Tail)
      if (v == NV - 1) return load_n(p, nl);
    return load(p);
  }
  Vf wv(int64_t row, int64_t kw, int v) const {
    return load(a.wt + (row * a.w.k[2] + kw) * a.cp + c0 + v * kLanes);
  }
  void finish(Vf acc, int64_t ow, int v) const {
    const int64_t o = ow * a.c + c0 + v * kLanes;
    if (a.bias) acc = acc + load(a.bias + c0 + v * kLanes);
    Vf r = act_apply_t<K>(acc);
    if (rr) r = r + ld(rr + o, v);
    if (Tail && v == NV - 1)
      store_n(yr + o, r, nl);
    else
      store(yr + o, r);
  }
  // Pixels [ow, ow + np), np <= kPix. Checked: each tap's column tested
  // (row ends), reads outside the row take the zero vectors zb; else every
  // tap lies inside the row. Rows in the padding read zb. kPix x NV
  // independent FMA chains hide the FMA latency.
  template <bool Checked>
  void tile(int64_t ow, int np) const {
    const Window& w = a.w;
    alignas(64) static constexpr T zb[NV * kLanes] = {};
    Vf acc[kPix][NV];
    for (auto& pv : acc)
      for (Vf& v : pv) v = zero();
    for (int64_t j = 0; j < nrows; ++j) {
      const bool row_in = rows[j] != nullptr;
      const T* b = row_in ? rows[j] + (ow * w.s[2] - w.pb[2]) * a.c + c0 : zb;
      const int64_t step = row_in ? w.s[2] * a.c : 0, dil = row_in ? w.d[2] * a.c : 0;
      for (int64_t kw = 0; kw < w.k[2]; ++kw) {
        Vf wk[NV];
        for (int v = 0; v < NV; ++v) wk[v] = wv(j, kw, v);
        const int64_t iw0 = ow * w.s[2] - w.pb[2] + kw * w.d[2];
        for (int p = 0; p < kPix; ++p) {
          const T* src = b + kw * dil + p * step;
          if constexpr (Checked) {
            const int64_t iw = iw0 + p * w.s[2];
            src = p < np && iw >= 0 && iw < w.in[2] ? src : zb;
          }
          for (int v = 0; v < NV; ++v) acc[p][v] = fma(ld(src + v * kLanes, v), wk[v], acc[p][v]);
        }
      }
    }
    for (int p = 0; p < kPix; ++p)
      if (!Checked || p < np)
        for (int v = 0; v < NV; ++v) finish(acc[p][v], ow + p, v);
  }
  void row(int64_t lo, int64_t hi) const {
    const int64_t ow_n = a.w.out[2];
    int64_t ow = 0;
    auto checked_to = [&](int64_t end) {
      while (ow < end) {
        const int np = static_cast<int>(std::min<int64_t>(kPix, end - ow));
        tile<true>(ow, np);
        ow += np;
      }
    };
    checked_to(std::min(lo, ow_n));
    for (; ow + kPix <= hi; ow += kPix) tile<false>(ow, kPix);
    checked_to(ow_n);
  }
};

template <class T, act::Kind K>
void run_typed(const DepthwiseArgs& a) {
  const Window& w = a.w;
  const int64_t C = a.c, IW = w.in[2], OW = w.out[2];
  // Output columns whose kernel row lies inside the input row: [lo, hi).
  const int64_t lo = (w.pb[2] + w.s[2] - 1) / w.s[2];
  const int64_t last = IW - 1 + w.pb[2] - (w.k[2] - 1) * w.d[2];
  const int64_t hi = last < 0 ? 0 : std::min(OW, last / w.s[2] + 1);
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  const T* res = static_cast<const T*>(a.residual);
  const int64_t out_rows = a.n * w.out[0] * w.out[1];
  parallel_for(out_rows, 1, [&](int64_t r0, int64_t r1) {
    const T* rows[conv::kDwMaxRows];
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / (w.out[0] * w.out[1]), od = r / w.out[1] % w.out[0], oh = r % w.out[1];
      int64_t nrows = 0;
      for (int64_t kd = 0; kd < w.k[0]; ++kd)
        for (int64_t kh = 0; kh < w.k[1]; ++kh) {
          const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
          const int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1];
          const bool in = id >= 0 && id < w.in[0] && ih >= 0 && ih < w.in[1];
          rows[nrows++] = in ? x + ((n * w.in[0] + id) * w.in[1] + ih) * IW * C : nullptr;
        }
      T* yr = y + r * OW * C;
      const T* rr = res ? res + r * OW * C : nullptr;
      int64_t c0 = 0;
      for (; c0 + 2 * kLanes <= C; c0 += 2 * kLanes)
        Channels<T, K, 2, false>{a, rows, nrows, yr, rr, c0, kLanes}.row(lo, hi);
      if (c0 + kLanes <= C) {
        Channels<T, K, 1, false>{a, rows, nrows, yr, rr, c0, kLanes}.row(lo, hi);
        c0 += kLanes;
      }
      if (c0 < C)
        Channels<T, K, 1, true>{a, rows, nrows, yr, rr, c0, static_cast<int>(C - c0)}.row(lo, hi);
    }
  });
}

template <class T>
void run_t(const DepthwiseArgs& a) {
  with_act(a.act, [&](auto kind) { run_typed<T, decltype(kind)::value>(a); });
}

inline void run(const DepthwiseArgs& a) {
  if (a.t == DType::bf16)
    run_t<bf16>(a);
  else if (a.t == DType::f16)
    run_t<f16>(a);
  else
    run_t<float>(a);
}

}  // namespace dw_k

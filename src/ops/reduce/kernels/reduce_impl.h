// Reduction kernels written once over the vec_*.h names; included by
// reduce_{scalar,avx2,avx512}.cc inside their ISA namespace.
//
// Determinism: every output is accumulated in an order fixed by the plan
// (the shape), never by the thread count: reduced-inner outputs are split
// into fixed blocks whose f32 partials are combined in block order; kept-inner
// outputs accumulate rows in order, in fixed blocks of kRowBlock rows.
// Neither depends on how outputs or column chunks are spread over threads.
// max/min propagate NaN; argmax returns the first NaN's index if there is one,
// else the first index of the maximum.

inline constexpr int64_t kGrainElems = 16384;
using reduce::kColChunk;
using reduce::kRowBlock;

// Input offset of a linear index over groups (dims, strides), walked as an odometer.
struct Odo {
  const int64_t* d;
  const int64_t* s;
  int n;
  int64_t idx[reduce::kMaxGroups] = {};
  int64_t off = 0;
  Odo(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t start)
      : d(dims.data()), s(strides.data()), n(static_cast<int>(dims.size())) {
    for (int k = n - 1; k >= 0; --k) {
      idx[k] = start % d[k];
      start /= d[k];
      off += idx[k] * s[k];
    }
  }
  void next() {
    for (int k = n - 1; k >= 0; --k) {
      off += s[k];
      if (++idx[k] < d[k]) return;
      off -= d[k] * s[k];
      idx[k] = 0;
    }
  }
};

inline int64_t offset_of(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                         int64_t i) {
  int64_t off = 0;
  for (size_t k = dims.size(); k-- > 0;) {
    off += (i % dims[k]) * strides[k];
    i /= dims[k];
  }
  return off;
}

// Kinds that add up (a transformed) input: zero-filled tail lanes add nothing.
template <reduce::Kind K>
inline constexpr bool kIsSum =
    K == reduce::Kind::sum || K == reduce::Kind::mean || K == reduce::Kind::sum_square ||
    K == reduce::Kind::l1 || K == reduce::Kind::l2;

template <reduce::Kind K>
inline float ident() {
  if constexpr (K == reduce::Kind::max) return -__builtin_inff();
  if constexpr (K == reduce::Kind::min) return __builtin_inff();
  if constexpr (K == reduce::Kind::prod) return 1.0f;
  return 0.0f;
}

// What each input element contributes (x^2, |x|, x).
template <reduce::Kind K>
inline Vf pre(Vf v) {
  if constexpr (K == reduce::Kind::sum_square || K == reduce::Kind::l2) return v * v;
  if constexpr (K == reduce::Kind::l1) return abs(v);
  return v;
}

// NaN-propagating combine (max/min return their second operand on NaN).
template <reduce::Kind K>
inline Vf comb(Vf a, Vf v) {
  if constexpr (kIsSum<K>) return a + v;
  if constexpr (K == reduce::Kind::prod) return a * v;
  if constexpr (K == reduce::Kind::max) return select(isnan(a), a, max(a, v));
  if constexpr (K == reduce::Kind::min) return select(isnan(a), a, min(a, v));
}
// Accumulates input elements (comb combines partials, which are transformed already).
template <reduce::Kind K>
inline Vf acc(Vf a, Vf x) {
  return comb<K>(a, pre<K>(x));
}
template <reduce::Kind K>
inline float comb_s(float a, float v) {
  if constexpr (kIsSum<K>) return a + v;
  if constexpr (K == reduce::Kind::prod) return a * v;
  if (a != a) return a;
  if (v != v) return v;
  if constexpr (K == reduce::Kind::max) return v > a ? v : a;
  return v < a ? v : a;
}
template <reduce::Kind K>
inline float hreduce(Vf a) {
  if constexpr (kIsSum<K>) return reduce_add(a);
  if constexpr (K == reduce::Kind::prod) {  // lanes multiplied in order
    alignas(64) float l[kLanes];
    store(l, a);
    float r = l[0];
    for (int i = 1; i < kLanes; ++i) r *= l[i];
    return r;
  }
  if (any(isnan(a))) return __builtin_nanf("");
  if constexpr (K == reduce::Kind::max) return reduce_max(a);
  return reduce_min(a);
}

// Partial of block b of one reduced-inner output whose kept offset is koff.
template <reduce::Kind K, class T>
float block_partial(const reduce::Plan& p, const T* x, int64_t koff, int64_t b) {
  int64_t c0, c1, i0, i1;
  if (p.subs_per_seg > 1) {
    c0 = b / p.subs_per_seg;
    c1 = c0 + 1;
    i0 = (b % p.subs_per_seg) * reduce::kBlock;
    i1 = std::min(p.inner, i0 + reduce::kBlock);
  } else {
    c0 = b * p.segs_per_block;
    c1 = std::min(p.rcount, c0 + p.segs_per_block);
    i0 = 0;
    i1 = p.inner;
  }
  const Vf id = set1(ident<K>());
  Vf a0 = id, a1 = id, a2 = id, a3 = id;
  float s = ident<K>();
  Odo ro(p.rdims, p.rstrides, c0);
  for (int64_t c = c0; c < c1; ++c, ro.next()) {
    const T* seg = x + koff + ro.off;
    int64_t i = i0;
    for (; i + 4 * kLanes <= i1; i += 4 * kLanes) {
      a0 = acc<K>(a0, load(seg + i));
      a1 = acc<K>(a1, load(seg + i + kLanes));
      a2 = acc<K>(a2, load(seg + i + 2 * kLanes));
      a3 = acc<K>(a3, load(seg + i + 3 * kLanes));
    }
    for (; i + kLanes <= i1; i += kLanes) a0 = acc<K>(a0, load(seg + i));
    if (i < i1) {
      if constexpr (kIsSum<K>) {
        a1 = acc<K>(a1, load_n(seg + i, static_cast<int>(i1 - i)));  // zero-filled lanes
      } else {
        for (; i < i1; ++i) s = comb_s<K>(s, to_f32(seg[i]));
      }
    }
  }
  return comb_s<K>(hreduce<K>(comb<K>(comb<K>(a0, a1), comb<K>(a2, a3))), s);
}

template <reduce::Kind K>
inline float finish(float total, int64_t nred) {
  if constexpr (K == reduce::Kind::mean) return total / static_cast<float>(nred);
  if constexpr (K == reduce::Kind::l2) return __builtin_sqrtf(total);
  return total;
}

template <class T>
inline void store1(T* y, float v) {
  store_n(y, set1(v), 1);
}

template <reduce::Kind K, class T>
void run_inner_reduced(const reduce::Plan& p, const T* x, T* y, float* ws) {
  const int64_t nb = p.nblocks;
  if (!p.split_outputs) {
    const int64_t grain = std::max<int64_t>(1, kGrainElems / std::max<int64_t>(p.nred, 1));
    parallel_for(p.kcount, grain, [&](int64_t o0, int64_t o1) {
      Odo ko(p.kdims, p.kstrides, o0);
      for (int64_t o = o0; o < o1; ++o, ko.next()) {
        float tot = ident<K>();
        for (int64_t b = 0; b < nb; ++b) tot = comb_s<K>(tot, block_partial<K>(p, x, ko.off, b));
        store1(y + o, finish<K>(tot, p.nred));
      }
    });
    return;
  }
  // Few outputs: the blocks of each output run in parallel, then are combined
  // in block order (the same partials and order as above).
  parallel_for(p.kcount * nb, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      ws[t] = block_partial<K>(p, x, offset_of(p.kdims, p.kstrides, t / nb), t % nb);
  });
  for (int64_t o = 0; o < p.kcount; ++o) {
    float tot = ident<K>();
    for (int64_t b = 0; b < nb; ++b) tot = comb_s<K>(tot, ws[o * nb + b]);
    store1(y + o, finish<K>(tot, p.nred));
  }
}

// Kept-inner reductions walk the input row by row (contiguous, prefetch
// friendly) over a chunk of up to kColChunk kept columns whose accumulators
// stay in L1/L2: rows are combined in order in blocks of kRowBlock rows
// (ki_block), and the blocks in order.
struct KiChunk {
  const void* base;  // first input element of the chunk
  int64_t nfull;     // columns in whole vectors
  int rem;           // columns in a last partial vector
  int64_t wv() const { return nfull + (rem ? kLanes : 0); }
};

template <reduce::Kind K, class T>
inline KiChunk ki_chunk(const reduce::Plan& p, const T* x, int64_t oc) {
  const int64_t o = oc / p.ki_ncc, j0 = (oc % p.ki_ncc) * kColChunk;
  const int64_t w = std::min(kColChunk, p.inner - j0);
  return {x + offset_of(p.kdims, p.kstrides, o) + j0, w / kLanes * kLanes,
          static_cast<int>(w % kLanes)};
}

template <reduce::Kind K, class T>
void ki_block(const reduce::Plan& p, const KiChunk& ch, int64_t rb, float* blk) {
  const Vf id = set1(ident<K>());
  const int64_t nfull = ch.nfull, wv = ch.wv();
  const int rem = ch.rem;
  for (int64_t j = 0; j < wv; j += kLanes) store(blk + j, id);
  const int64_t c0 = rb * kRowBlock, c1 = std::min(p.rcount, c0 + kRowBlock);
  Odo ro(p.rdims, p.rstrides, c0);
  for (int64_t c = c0; c < c1; ++c, ro.next()) {
    const T* r = static_cast<const T*>(ch.base) + ro.off;
    int64_t j = 0;
    for (; j + 2 * kLanes <= nfull; j += 2 * kLanes) {
      store(blk + j, acc<K>(load(blk + j), load(r + j)));
      store(blk + j + kLanes, acc<K>(load(blk + j + kLanes), load(r + j + kLanes)));
    }
    for (; j < nfull; j += kLanes) store(blk + j, acc<K>(load(blk + j), load(r + j)));
    if (rem) store(blk + nfull, acc<K>(load(blk + nfull), load_n(r + nfull, rem)));
  }
}

template <reduce::Kind K, class T>
void ki_store(const reduce::Plan& p, const KiChunk& ch, const float* acc, T* y, int64_t oc) {
  const int64_t o = oc / p.ki_ncc, j0 = (oc % p.ki_ncc) * kColChunk;
  T* yo = y + o * p.inner + j0;
  for (int64_t j = 0; j < ch.wv(); j += kLanes) {
    Vf v = load(acc + j);
    if constexpr (K == reduce::Kind::mean) v = v / set1(static_cast<float>(p.nred));
    if constexpr (K == reduce::Kind::l2) v = sqrt(v);
    if (j < ch.nfull)
      store(yo + j, v);
    else
      store_n(yo + j, v, ch.rem);
  }
}

template <reduce::Kind K, class T>
void run_inner_kept(const reduce::Plan& p, const T* x, T* y, float* ws) {
  const int64_t nchunks = p.kcount * p.ki_ncc, nrb = p.ki_nrb, cw = p.ki_cw;
  const Vf id = set1(ident<K>());
  if (!p.ki_split) {
    const int64_t grain = std::max<int64_t>(1, kGrainElems / std::max<int64_t>(p.rcount * cw, 1));
    parallel_for(nchunks, grain, [&](int64_t t0, int64_t t1) {
      alignas(64) float acc[kColChunk], blk[kColChunk];
      for (int64_t oc = t0; oc < t1; ++oc) {
        const KiChunk ch = ki_chunk<K>(p, x, oc);
        for (int64_t j = 0; j < ch.wv(); j += kLanes) store(acc + j, id);
        for (int64_t rb = 0; rb < nrb; ++rb) {
          ki_block<K, T>(p, ch, rb, blk);
          for (int64_t j = 0; j < ch.wv(); j += kLanes)
            store(acc + j, comb<K>(load(acc + j), load(blk + j)));
        }
        ki_store<K>(p, ch, acc, y, oc);
      }
    });
    return;
  }
  // Few chunks: their row blocks run in parallel into the workspace and are
  // combined in the same order as above.
  parallel_for(nchunks * nrb, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      ki_block<K, T>(p, ki_chunk<K>(p, x, t / nrb), t % nrb, ws + t * cw);
  });
  for (int64_t oc = 0; oc < nchunks; ++oc) {
    alignas(64) float acc[kColChunk];
    const KiChunk ch = ki_chunk<K>(p, x, oc);
    for (int64_t j = 0; j < ch.wv(); j += kLanes) store(acc + j, id);
    for (int64_t rb = 0; rb < nrb; ++rb) {
      const float* blk = ws + (oc * nrb + rb) * cw;
      for (int64_t j = 0; j < ch.wv(); j += kLanes)
        store(acc + j, comb<K>(load(acc + j), load(blk + j)));
    }
    ki_store<K>(p, ch, acc, y, oc);
  }
}

template <reduce::Kind K, class T>
void run_typed(const reduce::Plan& p, const T* x, T* y, float* ws) {
  if (p.kcount == 0 || p.inner == 0) {
    if (p.kcount > 0 && p.inner_reduced)  // reduced extent 0: sum 0, mean NaN
      for (int64_t o = 0; o < p.kcount; ++o) store1(y + o, finish<K>(ident<K>(), 0));
    return;
  }
  if (p.rcount == 0) {  // an empty reduced extent: x has no element to read
    const int64_t n = p.inner_reduced ? p.kcount : p.kcount * p.inner;
    for (int64_t o = 0; o < n; ++o) store1(y + o, finish<K>(ident<K>(), 0));
    return;
  }
  if (p.inner_reduced)
    run_inner_reduced<K>(p, x, y, ws);
  else
    run_inner_kept<K>(p, x, y, ws);
}

template <reduce::Kind K>
void run_kind(DType t, const reduce::Plan& p, const void* x, void* y, float* ws) {
  switch (t) {
    case DType::f32:
      return run_typed<K>(p, static_cast<const float*>(x), static_cast<float*>(y), ws);
    case DType::bf16:
      return run_typed<K>(p, static_cast<const bf16*>(x), static_cast<bf16*>(y), ws);
    case DType::f16:
      return run_typed<K>(p, static_cast<const f16*>(x), static_cast<f16*>(y), ws);
    default:
      return;
  }
}

inline void run(reduce::Kind kind, DType t, const reduce::Plan& p, const void* x, void* y,
                float* ws) {
  switch (kind) {
    case reduce::Kind::sum:
      return run_kind<reduce::Kind::sum>(t, p, x, y, ws);
    case reduce::Kind::mean:
      return run_kind<reduce::Kind::mean>(t, p, x, y, ws);
    case reduce::Kind::max:
      return run_kind<reduce::Kind::max>(t, p, x, y, ws);
    case reduce::Kind::min:
      return run_kind<reduce::Kind::min>(t, p, x, y, ws);
    case reduce::Kind::prod:
      return run_kind<reduce::Kind::prod>(t, p, x, y, ws);
    case reduce::Kind::sum_square:
      return run_kind<reduce::Kind::sum_square>(t, p, x, y, ws);
    case reduce::Kind::l1:
      return run_kind<reduce::Kind::l1>(t, p, x, y, ws);
    case reduce::Kind::l2:
      return run_kind<reduce::Kind::l2>(t, p, x, y, ws);
  }
}

// ---- argmax ----------------------------------------------------------------

// (v, i) beats (bv, bi): NaN first (lowest index among NaNs), else larger
// value, else lower index.
inline bool arg_better(float v, int64_t i, float bv, int64_t bi) {
  const bool vn = v != v, bn = bv != bv;
  if (vn || bn) return vn && (!bn || i < bi);
  return v > bv || (v == bv && i < bi);
}

// Lane update: strictly greater, or a first NaN (keeps the first index on ties).
inline Mask arg_update(Vf v, Vf best) { return (v > best) | (isnan(v) & (best == best)); }

// argmin is argmax of the negated values (exact; NaN stays NaN, ties keep
// the first index): the loads below negate when Neg.
template <bool Neg, class T>
inline Vf ld(const T* p) {
  return Neg ? -load(p) : load(p);
}
template <bool Neg, class T>
inline Vf ld_n(const T* p, int r) {
  return Neg ? -load_n(p, r) : load_n(p, r);
}
template <bool Neg, class T>
inline float ld_s(const T* p) {
  return Neg ? -to_f32(*p) : to_f32(*p);
}

template <bool Neg, class T>
int64_t argmax_row(const T* p, int64_t n) {
  int64_t i = 0, bi = 0;
  float bv;
  if (n >= 2 * kLanes) {
    // Two independent (best, index) chains over even / odd vectors, merged by
    // (NaN first, larger value, lower index): the first maximum overall.
    alignas(64) static constexpr float kIota[16] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                    8, 9, 10, 11, 12, 13, 14, 15};
    const Vf lane = load(kIota), step = set1(static_cast<float>(kLanes));
    Vf b0 = ld<Neg>(p), b1 = ld<Neg>(p + kLanes), i0 = lane, i1 = lane + step;
    for (i = 2 * kLanes; i + 2 * kLanes <= n; i += 2 * kLanes) {
      const Vf v0 = ld<Neg>(p + i), v1 = ld<Neg>(p + i + kLanes);
      const Vf at = lane + set1(static_cast<float>(i));
      const Mask u0 = arg_update(v0, b0), u1 = arg_update(v1, b1);
      b0 = select(u0, v0, b0);
      i0 = select(u0, at, i0);
      b1 = select(u1, v1, b1);
      i1 = select(u1, at + step, i1);
    }
    alignas(64) float tb[2 * kLanes], ti[2 * kLanes];
    store(tb, b0);
    store(tb + kLanes, b1);
    store(ti, i0);
    store(ti + kLanes, i1);
    bv = tb[0];
    bi = static_cast<int64_t>(ti[0]);
    for (int q = 1; q < 2 * kLanes; ++q)
      if (arg_better(tb[q], static_cast<int64_t>(ti[q]), bv, bi)) {
        bv = tb[q];
        bi = static_cast<int64_t>(ti[q]);
      }
  } else {
    bv = ld_s<Neg>(p);
    i = 1;
  }
  for (; i < n; ++i) {  // later indices: only strictly better values win
    const float v = ld_s<Neg>(p + i);
    if (v > bv || (v != v && bv == bv)) {
      bv = v;
      bi = i;
    }
  }
  return bi;
}

template <bool Neg, class T>
void argmax_typed(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner) {
  if (inner == 1) {
    parallel_for(outer, std::max<int64_t>(1, kGrainElems / n), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) y[o] = argmax_row<Neg>(x + o * n, n);
    });
    return;
  }
  // Kept inner: rows walked in order over a chunk of columns whose running
  // (best, index) stay in L1.
  const int64_t ncc = (inner + kColChunk - 1) / kColChunk;
  parallel_for(outer * ncc, std::max<int64_t>(1, kGrainElems / (n * kColChunk)),
               [&](int64_t t0, int64_t t1) {
                 alignas(64) float best[kColChunk], idx[kColChunk];
                 for (int64_t t = t0; t < t1; ++t) {
                   const int64_t o = t / ncc, j0 = (t % ncc) * kColChunk;
                   const int64_t w = std::min(kColChunk, inner - j0);
                   const T* b = x + o * n * inner + j0;
                   for (int64_t j = 0; j < w; j += kLanes) {
                     const int r = static_cast<int>(std::min<int64_t>(kLanes, w - j));
                     store(best + j, r == kLanes ? ld<Neg>(b + j) : ld_n<Neg>(b + j, r));
                     store(idx + j, zero());
                   }
                   for (int64_t row = 1; row < n; ++row) {
                     const T* xr = b + row * inner;
                     const Vf at = set1(static_cast<float>(row));
                     for (int64_t j = 0; j < w; j += kLanes) {
                       const int r = static_cast<int>(std::min<int64_t>(kLanes, w - j));
                       const Vf v = r == kLanes ? ld<Neg>(xr + j) : ld_n<Neg>(xr + j, r);
                       const Vf bv = load(best + j);
                       const Mask up = arg_update(v, bv);
                       store(best + j, select(up, v, bv));
                       store(idx + j, select(up, at, load(idx + j)));
                     }
                   }
                   for (int64_t j = 0; j < w; ++j)
                     y[o * inner + j0 + j] = static_cast<int64_t>(idx[j]);
                 }
               });
}

template <bool Neg>
void argmax_dtype(DType t, const void* x, int64_t* y, int64_t outer, int64_t n, int64_t inner) {
  switch (t) {
    case DType::f32:
      return argmax_typed<Neg>(static_cast<const float*>(x), y, outer, n, inner);
    case DType::bf16:
      return argmax_typed<Neg>(static_cast<const bf16*>(x), y, outer, n, inner);
    case DType::f16:
      return argmax_typed<Neg>(static_cast<const f16*>(x), y, outer, n, inner);
    default:
      return;
  }
}

inline void argmax(bool min, DType t, const void* x, int64_t* y, int64_t outer, int64_t n,
                   int64_t inner) {
  if (outer == 0 || inner == 0 || n == 0) return;
  if (min)
    argmax_dtype<true>(t, x, y, outer, n, inner);
  else
    argmax_dtype<false>(t, x, y, outer, n, inner);
}

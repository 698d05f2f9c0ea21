// softmax / log_softmax written once over the vec_*.h names; included by
// softmax_{scalar,avx2,avx512}.cc inside their ISA namespace.
//
// Numerically stable: the maximum of each row is subtracted before exp.
// Last axis (inner == 1): one row at a time, three passes over a row that
// stays in L1 after the first (max; exp and sum; scale). Other axes: chunks
// of up to kColChunk contiguous columns walk the axis row by row with an
// online per-column max and sum (two reads of x, contiguous loads).

namespace softmax_k {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Lanes [n, kLanes) of v replaced by `fill`.
inline Vf pad_n(Vf v, int n, float fill) {
  alignas(64) float b[kLanes];
  for (int i = 0; i < kLanes; ++i) b[i] = fill;
  store_n(b, v, n);
  return load(b);
}

template <class T>
inline Vf ld(const T* p, int n) {
  return n == kLanes ? load(p) : load_n(p, n);
}
template <class T>
inline void st(T* p, Vf v, int n) {
  if (n == kLanes)
    store(p, v);
  else
    store_n(p, v, n);
}

// exp(x) for x <= 0 (the x - max of softmax): one range reduction, a
// degree-6 polynomial and one scale by 2^k (vscalefps on AVX-512); results
// below the smallest denormal are exactly 0 (so -inf masks give 0), NaN stays NaN.
inline Vf exp_nonpos(Vf x) {
  // Below -110 the result rounds to 0 in f32, so the clamp costs nothing and
  // scale_pow2 returns exactly 0 there (and for -inf masks).
  const Vf xc = max(set1(-110.0f), x);  // NaN in the second operand propagates
  const Vf k = round(xc * set1(1.44269504088896341f));
  Vf r = fnma(k, set1(0.693359375f), xc);
  r = fnma(k, set1(-2.12194440e-4f), r);
  // Degree 6 (Taylor through r^6): the dropped r^7/7! is < 1.2e-7 relative
  // for |r| <= ln2/2, about 1 ulp, well inside softmax's tolerance.
  static constexpr float c[] = {0.5f, 1.0f / 6, 1.0f / 24, 1.0f / 120, 1.0f / 720};
  const Vf p = fma(poly(r, c), r * r, r + set1(1.0f));
  return scale_pow2(p, k);
}

// f32 outputs larger than this are written with non-temporal stores (no
// read-for-ownership of y; the output would not stay in L2/L3 anyway).
inline constexpr int64_t kStreamBytes = int64_t{16} << 20;
// Row lengths up to this keep exp(x - max) in an L1-resident f32 scratch
// between the sum and the write pass; longer rows recompute exp.
inline constexpr int64_t kScratch = 4096;

template <bool NT, class T>
inline void put(T* p, Vf v) {
  if constexpr (NT && std::is_same_v<T, float>)
    stream(p, v);
  else
    store(p, v);
}

// Software prefetch of [p, p + bytes) (no effect on results): the next row is
// fetched while this one is computed from L1, so memory never idles.
inline void prefetch_bytes(const void* p, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(static_cast<const char*>(p) + o);
}

// One row; `xn` (nullable) is the next row, prefetched during pass 2.
template <bool NT, class T>
void row(const T* x, T* y, int64_t n, bool log, float* scratch, const T* xn) {
  // Pass 1: the maximum (the only read of x from memory).
  Vf m0 = set1(kNegInf), m1 = m0;
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    m0 = max(m0, load(x + i));
    m1 = max(m1, load(x + i + kLanes));
  }
  for (; i + kLanes <= n; i += kLanes) m0 = max(m0, load(x + i));
  if (i < n) {
    const int r = static_cast<int>(n - i);
    m1 = max(m1, pad_n(load_n(x + i, r), r, kNegInf));
  }
  const float mx = reduce_max(max(m0, m1));
  const Vf vm = set1(mx);
  // Pass 2: sum of exp(x - max), kept in the scratch when the row fits.
  const bool keep = !log && n <= kScratch;
  Vf s0 = zero(), s1 = zero();
  i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    if (xn && i % (64 / sizeof(T)) < 2 * kLanes) prefetch_bytes(xn + i, 2 * kLanes * sizeof(T));
    const Vf e0 = exp_nonpos(load(x + i) - vm), e1 = exp_nonpos(load(x + i + kLanes) - vm);
    s0 = s0 + e0;
    s1 = s1 + e1;
    if (keep) {
      store(scratch + i, e0);
      store(scratch + i + kLanes, e1);
    }
  }
  for (; i + kLanes <= n; i += kLanes) {
    const Vf e = exp_nonpos(load(x + i) - vm);
    s0 = s0 + e;
    if (keep) store(scratch + i, e);
  }
  if (i < n) {
    const int r = static_cast<int>(n - i);
    const Vf e = pad_n(exp_nonpos(load_n(x + i, r) - vm), r, 0.0f);
    s1 = s1 + e;
    if (keep) store_n(scratch + i, e, r);
  }
  const float sum = reduce_add(s0 + s1);
  // Pass 3: write y.
  if (log) {
    const Vf c = set1(mx + std::log(sum));
    for (i = 0; i + kLanes <= n; i += kLanes) put<NT>(y + i, load(x + i) - c);
    if (i < n) {
      const int r = static_cast<int>(n - i);
      store_n(y + i, load_n(x + i, r) - c, r);
    }
    return;
  }
  const Vf inv = set1(1.0f / sum);
  if (keep) {
    for (i = 0; i + kLanes <= n; i += kLanes) put<NT>(y + i, load(scratch + i) * inv);
    if (i < n) {
      const int r = static_cast<int>(n - i);
      store_n(y + i, load_n(scratch + i, r) * inv, r);
    }
  } else {
    for (i = 0; i + kLanes <= n; i += kLanes) put<NT>(y + i, exp_nonpos(load(x + i) - vm) * inv);
    if (i < n) {
      const int r = static_cast<int>(n - i);
      store_n(y + i, exp_nonpos(load_n(x + i, r) - vm) * inv, r);
    }
  }
}

// Columns per task of the other-axes path; the per-column state lives on
// the stack (2 x 4 KiB).
inline constexpr int64_t kColChunk = 1024;

template <class T>
inline Vf ldc(const T* p, int64_t j, int64_t width) {
  return j + kLanes <= width ? load(p + j) : load_n(p + j, static_cast<int>(width - j));
}
inline void stc(float* p, int64_t j, int64_t width, Vf v) {
  if (j + kLanes <= width)
    store(p + j, v);
  else
    store_n(p + j, v, static_cast<int>(width - j));
}
template <class T>
inline void sty(T* p, int64_t j, int64_t width, Vf v) {
  if (j + kLanes <= width)
    store(p + j, v);
  else
    store_n(p + j, v, static_cast<int>(width - j));
}

// Rows of the other-axes path handled per visit of the column state: the
// state is loaded once per kRowBlock rows and kept in registers meanwhile.
inline constexpr int64_t kRowBlock = 16;

// Softmax over n rows spaced `inner` elements apart, for `width` (<= kColChunk)
// contiguous columns. Pass 1 walks the rows in order with an online
// per-column maximum and rescaled sum; pass 2 writes. Each column sees the
// same operations in the same order whatever the chunking, so results do not
// depend on the thread count.
template <class T>
void columns(const T* x, T* y, int64_t n, int64_t inner, int64_t width, bool log) {
  alignas(64) float m[kColChunk], s[kColChunk];
  const Vf lowest = set1(-std::numeric_limits<float>::max());
  for (int64_t j = 0; j < width; j += kLanes) {
    stc(m, j, width, lowest);
    stc(s, j, width, zero());
  }
  for (int64_t a0 = 0; a0 < n; a0 += kRowBlock) {
    const int64_t a1 = std::min(n, a0 + kRowBlock);
    for (int64_t j = 0; j < width; j += kLanes) {
      Vf mo = ldc(m, j, width), so = ldc(s, j, width);
      for (int64_t a = a0; a < a1; ++a) {
        if (a + kRowBlock < n)
          __builtin_prefetch(x + (a + kRowBlock) * inner + j);  // the next row block
        const Vf v = ldc(x + a * inner, j, width);
        const Vf mn = max(mo, v);  // NaN in v propagates
        so = fma(so, exp_nonpos(mo - mn), exp_nonpos(v - mn));
        mo = mn;
      }
      stc(m, j, width, mo);
      stc(s, j, width, so);
    }
  }
  for (int64_t j = 0; j < width; j += kLanes) {
    if (log)
      stc(m, j, width, ldc(m, j, width) + vlog(ldc(s, j, width)));
    else
      stc(s, j, width, set1(1.0f) / ldc(s, j, width));
  }
  for (int64_t a0 = 0; a0 < n; a0 += kRowBlock) {
    const int64_t a1 = std::min(n, a0 + kRowBlock);
    for (int64_t j = 0; j < width; j += kLanes) {
      const Vf mv = ldc(m, j, width), sv = ldc(s, j, width);
      for (int64_t a = a0; a < a1; ++a) {
        if (a + kRowBlock < n) __builtin_prefetch(x + (a + kRowBlock) * inner + j);
        const Vf v = ldc(x + a * inner, j, width);
        sty(y + a * inner, j, width, log ? v - mv : exp_nonpos(v - mv) * sv);
      }
    }
  }
}

template <class T>
void run_typed(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  if (outer == 0 || n == 0 || inner == 0) return;
  if (inner == 1) {
    // Rows are the unit of work: a row is computed the same way whichever
    // thread runs it, so results are bit-identical for any thread count.
    const int64_t grain = std::max<int64_t>(1, 8192 / n);
    const bool nt = std::is_same_v<T, float> && kLanes > 1 &&
                    reinterpret_cast<uintptr_t>(y) % 64 == 0 && n % 16 == 0 &&
                    outer * n * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
    parallel_for(outer, grain, [&](int64_t b, int64_t e) {
      alignas(64) float scratch[kScratch];
      for (int64_t r = b; r < e; ++r) {
        // Three rows ahead: one row of compute is shorter than a DRAM round trip.
        const T* xn = r + 3 < e ? x + (r + 3) * n : nullptr;
        if (nt)
          row<true>(x + r * n, y + r * n, n, log, scratch, xn);
        else
          row<false>(x + r * n, y + r * n, n, log, scratch, xn);
      }
      if (nt) store_fence();
    });
    return;
  }
  // Column chunks: a function of the shape only (never of the thread count);
  // at least two per outer slice when inner allows, so two threads share work.
  const int64_t half = ((inner + 1) / 2 + 63) / 64 * 64;
  const int64_t cw = std::min(kColChunk, std::max<int64_t>(64, half));
  const int64_t chunks = (inner + cw - 1) / cw;
  const int64_t grain = std::max<int64_t>(1, 16384 / (n * cw));
  parallel_for(outer * chunks, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / chunks, c0 = (t % chunks) * cw;
      const int64_t off = o * n * inner + c0;
      columns(x + off, y + off, n, inner, std::min(cw, inner - c0), log);
    }
  });
}

inline void run(DType t, const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
                bool log) {
  switch (t) {
    case DType::f32:
      return run_typed(static_cast<const float*>(x), static_cast<float*>(y), outer, n, inner, log);
    case DType::bf16:
      return run_typed(static_cast<const bf16*>(x), static_cast<bf16*>(y), outer, n, inner, log);
    case DType::f16:
      return run_typed(static_cast<const f16*>(x), static_cast<f16*>(y), outer, n, inner, log);
    default:
      return;
  }
}

}  // namespace softmax_k

// Kernels of topk, cumsum, rope and sample, written once over the vec_*.h
// names; included by index_{scalar,avx2,avx512}.cc inside their ISA namespace.
// f32 arithmetic inside; every output element is computed by the same code
// whatever the thread count (bit-identical results).

namespace indexk {

using index::AxisShape;
using index::RopeParams;
using index::SampleParams;

// n elements of T -> f32 (vector loads convert bf16/f16).
template <class T>
inline void to_f32_row(const T* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, load(x + i));
  if (i < n) store_n(y + i, load_n(x + i, static_cast<int>(n - i)), static_cast<int>(n - i));
}
template <class T>
inline void from_f32_row(const float* x, T* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, load(x + i));
  if (i < n) store_n(y + i, load_n(x + i, static_cast<int>(n - i)), static_cast<int>(n - i));
}

// ---- cumsum ----------------------------------------------------------------
template <class T>
void cumsum_t(const T* x, T* y, AxisShape s, bool exclusive, bool reverse) {
  const int64_t n = s.n, inner = s.inner;
  if (inner == 1) {
    // Along the contiguous axis. Every row is one in-order f32 chain
    // (acc += v), whatever the grouping below, so results never depend on it.
    // Groups of kLanes rows are scanned together: a block of 256 columns of
    // each row is converted to f32, transposed (row r in lane r), scanned
    // with one vector add per column, and transposed back. Left-over rows
    // (and scalar builds) scan one row at a time.
    constexpr int64_t kC = 256;
    const int64_t groups = kLanes > 1 ? s.outer / kLanes : 0;
    const shape::TileFn tile = transpose_f32_tile();
    auto transpose = [&](const float* src, int64_t sl, float* dst, int64_t dl, int64_t rows,
                         int64_t cols) {
      if (tile) return tile(src, sl, dst, dl, rows, cols);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) dst[c * dl + r] = src[r * sl + c];
    };
    parallel_for(groups, std::max<int64_t>(1, 256 / std::max<int64_t>(1, n)),
                 [&](int64_t b, int64_t e) {
                   alignas(64) float rows[kLanes * kC], cols[kC * kLanes];
                   for (int64_t g = b; g < e; ++g) {
                     const int64_t o0 = g * kLanes;
                     Vf acc = zero();
                     for (int64_t c0 = 0; c0 < n; c0 += kC) {
                       const int64_t m = std::min<int64_t>(kC, n - c0);
                       const int64_t at = reverse ? n - c0 - m : c0;
                       for (int r = 0; r < kLanes; ++r)
                         to_f32_row(x + (o0 + r) * n + at, rows + r * kC, m);
                       transpose(rows, kC, cols, kLanes, kLanes, m);
                       for (int64_t q = 0; q < m; ++q) {
                         const int64_t i = reverse ? m - 1 - q : q;
                         const Vf v = load(cols + i * kLanes);
                         store(cols + i * kLanes, exclusive ? acc : acc + v);
                         acc = acc + v;
                       }
                       transpose(cols, kLanes, rows, kC, m, kLanes);
                       for (int r = 0; r < kLanes; ++r)
                         from_f32_row(rows + r * kC, y + (o0 + r) * n + at, m);
                     }
                   }
                 });
    const int64_t rest0 = groups * kLanes;
    parallel_for(s.outer - rest0, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n)),
                 [&](int64_t b, int64_t e) {
                   float buf[256];
                   for (int64_t o = rest0 + b; o < rest0 + e; ++o) {
                     const T* xr = x + o * n;
                     T* yr = y + o * n;
                     float acc = 0;
                     for (int64_t c0 = 0; c0 < n; c0 += 256) {
                       const int64_t m = std::min<int64_t>(256, n - c0);
                       // Block c0 of the scan order: forward [c0, c0 + m), reverse from the end.
                       const int64_t at = reverse ? n - c0 - m : c0;
                       to_f32_row(xr + at, buf, m);
                       if (!reverse) {
                         for (int64_t i = 0; i < m; ++i) {
                           const float v = buf[i];
                           buf[i] = exclusive ? acc : acc + v;
                           acc += v;
                         }
                       } else {
                         for (int64_t i = m; i-- > 0;) {
                           const float v = buf[i];
                           buf[i] = exclusive ? acc : acc + v;
                           acc += v;
                         }
                       }
                       from_f32_row(buf, yr + at, m);
                     }
                   }
                 });
    return;
  }
  // Across rows: a block of up to 2048 columns accumulates in an f32 buffer
  // (L1) while the rows are walked in memory order.
  constexpr int64_t kCols = 2048;
  const int64_t cblocks = (inner + kCols - 1) / kCols;
  parallel_for(s.outer * cblocks, 1, [&](int64_t b, int64_t e) {
    alignas(64) float acc[kCols];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / cblocks, c0 = (t % cblocks) * kCols, cn = std::min(kCols, inner - c0);
      std::fill(acc, acc + cn, 0.0f);
      for (int64_t q = 0; q < n; ++q) {
        const int64_t i = reverse ? n - 1 - q : q;
        const T* xr = x + (o * n + i) * inner + c0;
        T* yr = y + (o * n + i) * inner + c0;
        int64_t j = 0;
        for (; j + kLanes <= cn; j += kLanes) {
          const Vf a = load(acc + j), v = load(xr + j);
          store(yr + j, exclusive ? a : a + v);
          store(acc + j, a + v);
        }
        if (j < cn) {
          const int r = static_cast<int>(cn - j);
          const Vf a = load_n(acc + j, r), v = load_n(xr + j, r);
          store_n(yr + j, exclusive ? a : a + v, r);
          store_n(acc + j, a + v, r);
        }
      }
    }
  });
}

void cumsum(DType t, const void* x, void* y, AxisShape s, bool exclusive, bool reverse) {
  switch (t) {
    case DType::f32:
      return cumsum_t(static_cast<const float*>(x), static_cast<float*>(y), s, exclusive, reverse);
    case DType::bf16:
      return cumsum_t(static_cast<const bf16*>(x), static_cast<bf16*>(y), s, exclusive, reverse);
    case DType::f16:
      return cumsum_t(static_cast<const f16*>(x), static_cast<f16*>(y), s, exclusive, reverse);
    default:
      return;
  }
}

// ---- rope ------------------------------------------------------------------
template <class T>
void rope_t(const T* x, const T* cs, const T* sn, T* y, const RopeParams& p) {
  const int64_t rows = p.B * p.L * p.H, half = p.R / 2;
  parallel_for(rows, std::max<int64_t>(1, 2048 / std::max<int64_t>(1, p.D)),
               [&](int64_t b, int64_t e) {
                 float xb[2 * 256], cb[256], sb[256];
                 for (int64_t r = b; r < e; ++r) {
                   // r enumerates rows in memory order of the layout.
                   int64_t bi, l;
                   if (p.bhld) {
                     bi = r / (p.H * p.L);
                     l = r % p.L;
                   } else {
                     bi = r / (p.L * p.H);
                     l = (r / p.H) % p.L;
                   }
                   const int64_t trow = p.rows ? p.rows[bi * p.L + l] : l;
                   const T* xr = x + r * p.D;
                   T* yr = y + r * p.D;
                   const T* c = cs + trow * half;
                   const T* s = sn + trow * half;
                   if (!p.interleaved) {
                     int64_t i = 0;
                     for (; i + kLanes <= half; i += kLanes) {
                       const Vf x1 = load(xr + i), x2 = load(xr + i + half), cv = load(c + i),
                                sv = load(s + i);
                       store(yr + i, fnma(x2, sv, x1 * cv));
                       store(yr + i + half, fma(x1, sv, x2 * cv));
                     }
                     if (i < half) {
                       const int m = static_cast<int>(half - i);
                       const Vf x1 = load_n(xr + i, m), x2 = load_n(xr + i + half, m),
                                cv = load_n(c + i, m), sv = load_n(s + i, m);
                       store_n(yr + i, fnma(x2, sv, x1 * cv), m);
                       store_n(yr + i + half, fma(x1, sv, x2 * cv), m);
                     }
                   } else {
                     for (int64_t i0 = 0; i0 < half; i0 += 256) {
                       const int64_t m = std::min<int64_t>(256, half - i0);
                       to_f32_row(xr + 2 * i0, xb, 2 * m);
                       to_f32_row(c + i0, cb, m);
                       to_f32_row(s + i0, sb, m);
                       for (int64_t i = 0; i < m; ++i) {
                         const float a = xb[2 * i], bb = xb[2 * i + 1];
                         xb[2 * i] = std::fma(-bb, sb[i], a * cb[i]);
                         xb[2 * i + 1] = std::fma(a, sb[i], bb * cb[i]);
                       }
                       from_f32_row(xb, yr + 2 * i0, 2 * m);
                     }
                   }
                   if (p.R < p.D)
                     std::memcpy(yr + p.R, xr + p.R, static_cast<size_t>(p.D - p.R) * sizeof(T));
                 }
               });
}

void rope(DType t, const void* x, const void* c, const void* s, void* y, const RopeParams& p) {
  switch (t) {
    case DType::f32:
      return rope_t(static_cast<const float*>(x), static_cast<const float*>(c),
                    static_cast<const float*>(s), static_cast<float*>(y), p);
    case DType::bf16:
      return rope_t(static_cast<const bf16*>(x), static_cast<const bf16*>(c),
                    static_cast<const bf16*>(s), static_cast<bf16*>(y), p);
    case DType::f16:
      return rope_t(static_cast<const f16*>(x), static_cast<const f16*>(c),
                    static_cast<const f16*>(s), static_cast<f16*>(y), p);
    default:
      return;
  }
}

// ---- topk ------------------------------------------------------------------
using index::Cand;  // candidates of one row: values (f32, exact copies) and indices

// Keeps the best k of `row` (n values) in cand[0..k), ordered best first
// under the shared total order (index::before). For k << n a vector pass
// first keeps only the values at least as good as a threshold th: the k-th
// best of a prefix, so at least k values reach it and every one of the true
// best k does (NaN, the largest, is always kept). nth_element + sort then
// run on those few candidates only: the result is the same set and order as
// over the whole row.
inline int64_t select_best(const float* row, int64_t n, int64_t k, bool largest, Cand* cand) {
  auto cmp = [largest](const Cand& a, const Cand& b) {
    return index::before(a.v, a.i, b.v, b.i, largest);
  };
  if (k <= 0) return 0;
  const int64_t m = std::max(k, n / 16);
  int64_t count = -1;  // -1: not filtered
  if (8 * k <= n) {
    for (int64_t i = 0; i < m; ++i) cand[i] = {row[i], i};
    std::nth_element(cand, cand + (k - 1), cand + m, cmp);
    const float th = cand[k - 1].v;
    if (th == th) {
      count = 0;
      const Vf t = set1(th);
      int64_t i = 0;
      auto keep = [&](int64_t j) {
        const float v = row[j];
        if (v != v || (largest ? v >= th : v <= th)) cand[count++] = {v, j};
      };
      for (; i + kLanes <= n; i += kLanes) {
        const Vf v = load(row + i);
        if (any((largest ? v >= t : v <= t) | isnan(v)))
          for (int64_t j = i; j < i + kLanes; ++j) keep(j);
      }
      for (; i < n; ++i) keep(i);
    }
  }
  if (count < 0) {
    for (int64_t i = 0; i < n; ++i) cand[i] = {row[i], i};
    count = n;
  }
  if (k < count) std::nth_element(cand, cand + k, cand + count, cmp);
  std::sort(cand, cand + k, cmp);
  return count;
}

// Slot p of a workspace of slots of `bytes` each.
inline char* ws_slot(void* ws, int64_t p, size_t bytes) {
  return static_cast<char*>(ws) + static_cast<size_t>(p) * bytes;
}

template <class T>
void topk_t(const T* x, T* values, int64_t* indices, AxisShape s, int64_t k, bool largest,
            bool sorted, void* ws) {
  const int64_t n = s.n, inner = s.inner, rows = s.outer * inner;
  const int64_t slots = index::work_slots(rows);
  const size_t slot = index::topk_slot_bytes(n, k);
  parallel_tasks(slots, [&](int64_t p) {
    const int64_t b = p * rows / slots, e = (p + 1) * rows / slots;
    float* row = reinterpret_cast<float*>(ws_slot(ws, p, slot));
    float* outv = row + index::ws_round(static_cast<size_t>(n) * sizeof(float)) / sizeof(float);
    Cand* cand = reinterpret_cast<Cand*>(reinterpret_cast<char*>(outv) +
                                         index::ws_round(static_cast<size_t>(k) * sizeof(float)));
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / inner, j = t % inner;
      if (inner == 1) {
        to_f32_row(x + o * n, row, n);
      } else {
        for (int64_t i = 0; i < n; ++i) row[i] = ::opsnn::to_f32(x[(o * n + i) * inner + j]);
      }
      select_best(row, n, k, largest, cand);
      if (!sorted)
        std::sort(cand, cand + k, [](const Cand& a, const Cand& c) { return a.i < c.i; });
      for (int64_t q = 0; q < k; ++q) {
        indices[(o * k + q) * inner + j] = cand[q].i;
        outv[q] = cand[q].v;
      }
      if (inner == 1) {
        from_f32_row(outv, values + o * k, k);
      } else {
        for (int64_t q = 0; q < k; ++q) store_n(values + (o * k + q) * inner + j, set1(outv[q]), 1);
      }
    }
  });
}

void topk(DType t, const void* x, void* v, int64_t* idx, AxisShape s, int64_t k, bool largest,
          bool sorted, void* ws) {
  switch (t) {
    case DType::f32:
      return topk_t(static_cast<const float*>(x), static_cast<float*>(v), idx, s, k, largest,
                    sorted, ws);
    case DType::bf16:
      return topk_t(static_cast<const bf16*>(x), static_cast<bf16*>(v), idx, s, k, largest, sorted,
                    ws);
    case DType::f16:
      return topk_t(static_cast<const f16*>(x), static_cast<f16*>(v), idx, s, k, largest, sorted,
                    ws);
    default:
      return;
  }
}

// ---- sample ----------------------------------------------------------------
template <class T>
void sample_t(const T* logits, int64_t* out, int64_t B, int64_t V, const SampleParams& p,
              void* ws) {
  const int64_t slots = index::work_slots(B);
  const size_t slot = index::sample_slot_bytes(V), uv = static_cast<size_t>(V);
  parallel_tasks(slots, [&](int64_t task) {
    const int64_t b = task * B / slots, e = (task + 1) * B / slots;
    char* base = ws_slot(ws, task, slot);
    float* row = reinterpret_cast<float*>(base);
    base += index::ws_round(uv * sizeof(float));
    Cand* cand = reinterpret_cast<Cand*>(base);
    base += index::ws_round(uv * sizeof(Cand));
    double* v = reinterpret_cast<double*>(base);
    double* w = reinterpret_cast<double*>(base + index::ws_round(uv * 8));
    int64_t* idx = reinterpret_cast<int64_t*>(base + 2 * index::ws_round(uv * 8));
    for (int64_t r = b; r < e; ++r) {
      to_f32_row(logits + r * V, row, V);
      int64_t m = p.k > 0 && p.k < V ? p.k : V;
      if (p.temperature == 0) m = 1;
      if (m == 1) {
        // Vector arg-max: the maximum first, then its lowest index (NaN wins, as in the order).
        int64_t best = 0;
        for (int64_t i = 1; i < V; ++i)
          if (index::before(row[static_cast<size_t>(i)], i, row[static_cast<size_t>(best)], best,
                            true))
            best = i;
        out[r] = best;
        continue;
      }
      select_best(row, V, m, true, cand);
      for (int64_t j = 0; j < m; ++j) {
        v[j] = cand[j].v;
        idx[j] = cand[j].i;
      }
      out[r] =
          index::sample_pick(v, idx, m, p.temperature, p.p, index::sample_uniform(p.seed, r), w);
    }
  });
}

void sample(DType t, const void* x, int64_t* out, int64_t B, int64_t V, const SampleParams& p,
            void* ws) {
  switch (t) {
    case DType::f32:
      return sample_t(static_cast<const float*>(x), out, B, V, p, ws);
    case DType::bf16:
      return sample_t(static_cast<const bf16*>(x), out, B, V, p, ws);
    case DType::f16:
      return sample_t(static_cast<const f16*>(x), out, B, V, p, ws);
    default:
      return;
  }
}

inline index::Kernels kernels() { return {cumsum, rope, topk, sample}; }

}  // namespace indexk

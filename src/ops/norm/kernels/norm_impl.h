// Normalisation kernels written once over the vec_*.h names; included by
// norm_{scalar,avx2,avx512}.cc inside their ISA namespace.
//
// Mean and variance of a row: the row is cut into blocks of kBlock elements
// (16 KiB of f32, L1-resident). Each block is read from memory once for its
// sum and re-read from L1 for its sum of squared deviations (an exact
// two-pass within the block); blocks are combined in order with Chan's
// formula in double. A row of up to kBlock elements is thus one read from
// memory; the write pass then finds the row still in L1/L2. The blocking
// depends only on the row length, never on the thread count.

namespace norm_k {

#include "kernels/act/act_vec.inc"

inline constexpr int64_t kBlock = 4096;

// Lanes [n, kLanes) of v set to zero.
inline Vf zero_tail(Vf v, int n) {
  alignas(64) float b[kLanes] = {};
  store_n(b, v, n);
  return load(b);
}

// v(i) = x[i] (+ r[i]).
template <class T, bool Res>
inline Vf src(const T* x, const T* r, int64_t i) {
  if constexpr (Res)
    return load(x + i) + load(r + i);
  else
    return load(x + i);
}
template <class T, bool Res>
inline Vf src_n(const T* x, const T* r, int64_t i, int n) {
  if constexpr (Res)
    return load_n(x + i, n) + load_n(r + i, n);
  else
    return load_n(x + i, n);
}

#include "ops/common/stream_kernels.inc"  // kStreamBytes, put<NT>, prefetch_bytes

// One read of a block of v = x (+ r) over nb elements (v also written to s
// when Res), folded into four partial vectors by acc(partial, v) (the masked
// tail, zero beyond nb, into the second); returns (p0 + p1) + (p2 + p3)
// reduced. The layer and RMS statistics differ only in `acc`.
template <class T, bool Res, bool NT, class Acc>
inline float block_reduce(const T* xb, const T* rb, T* sb, int64_t nb, Acc acc) {
  Vf a0 = zero(), a1 = zero(), a2 = zero(), a3 = zero();
  int64_t i = 0;
  for (; i + 4 * kLanes <= nb; i += 4 * kLanes) {
    const Vf v0 = src<T, Res>(xb, rb, i), v1 = src<T, Res>(xb, rb, i + kLanes);
    const Vf v2 = src<T, Res>(xb, rb, i + 2 * kLanes), v3 = src<T, Res>(xb, rb, i + 3 * kLanes);
    if constexpr (Res) {
      put<NT>(sb + i, v0);
      put<NT>(sb + i + kLanes, v1);
      put<NT>(sb + i + 2 * kLanes, v2);
      put<NT>(sb + i + 3 * kLanes, v3);
    }
    a0 = acc(a0, v0);
    a1 = acc(a1, v1);
    a2 = acc(a2, v2);
    a3 = acc(a3, v3);
  }
  for (; i + kLanes <= nb; i += kLanes) {
    const Vf v = src<T, Res>(xb, rb, i);
    if constexpr (Res) put<NT>(sb + i, v);
    a0 = acc(a0, v);
  }
  if (i < nb) {
    const int rem = static_cast<int>(nb - i);
    const Vf v = src_n<T, Res>(xb, rb, i, rem);  // zero beyond rem
    if constexpr (Res) store_n(sb + i, v, rem);
    a1 = acc(a1, v);
  }
  return reduce_add((a0 + a1) + (a2 + a3));
}

struct Stats {
  float mean, scale;  // scale: 1/sqrt(var + eps) or 1/sqrt(mean(v^2) + eps)
};

// Block pass b (the block in L1) from its pass-a sum: deviations from the
// block mean, summed and squared: the corrected two-pass formula M2 = sum
// d^2 - (sum d)^2 / nb and mean = bmean + sum d / nb remove the rounding of
// bmean itself. xn, rn (nullable): the same block of a later row, prefetched.
struct BlockMoments {
  double mean, m2;
};
template <class T, bool Res>
BlockMoments block_moments(const T* xb, const T* rb, int64_t nb, float bsum, const T* xn,
                           const T* rn) {
  const float bmean = bsum / static_cast<float>(nb);
  const Vf vm = set1(bmean);
  Vf a0 = zero(), a1 = zero(), a2 = zero(), a3 = zero();
  Vf q0 = zero(), q1 = zero(), q2 = zero(), q3 = zero();
  int64_t i = 0;
  for (; i + 4 * kLanes <= nb; i += 4 * kLanes) {
    if (xn) {
      prefetch_bytes(xn + i, 4 * kLanes * sizeof(T));
      if constexpr (Res) prefetch_bytes(rn + i, 4 * kLanes * sizeof(T));
    }
    const Vf d0 = src<T, Res>(xb, rb, i) - vm, d1 = src<T, Res>(xb, rb, i + kLanes) - vm;
    const Vf d2 = src<T, Res>(xb, rb, i + 2 * kLanes) - vm,
             d3 = src<T, Res>(xb, rb, i + 3 * kLanes) - vm;
    a0 = a0 + d0;
    a1 = a1 + d1;
    a2 = a2 + d2;
    a3 = a3 + d3;
    q0 = fma(d0, d0, q0);
    q1 = fma(d1, d1, q1);
    q2 = fma(d2, d2, q2);
    q3 = fma(d3, d3, q3);
  }
  for (; i + kLanes <= nb; i += kLanes) {
    const Vf d = src<T, Res>(xb, rb, i) - vm;
    a0 = a0 + d;
    q0 = fma(d, d, q0);
  }
  if (i < nb) {
    const int rem = static_cast<int>(nb - i);
    const Vf d = zero_tail(src_n<T, Res>(xb, rb, i, rem) - vm, rem);
    a1 = a1 + d;
    q1 = fma(d, d, q1);
  }
  const double dsum = reduce_add((a0 + a1) + (a2 + a3));
  return {bmean + dsum / static_cast<double>(nb),
          std::max(0.0, reduce_add((q0 + q1) + (q2 + q3)) - dsum * dsum / static_cast<double>(nb))};
}

// Row moments combined block by block in row order (Chan, Golub, LeVeque).
struct RowMoments {
  double cnt = 0, mean = 0, m2 = 0;
  void add(int64_t nb, BlockMoments b) {
    const double tot = cnt + static_cast<double>(nb), delta = b.mean - mean;
    mean += delta * (static_cast<double>(nb) / tot);
    m2 += b.m2 + delta * delta * (cnt * static_cast<double>(nb) / tot);
    cnt = tot;
  }
  Stats stats(int64_t n, float eps) const {
    const double var = n > 0 ? m2 / static_cast<double>(n) : 0.0;
    return {static_cast<float>(mean),
            static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)))};
  }
};

// Layer statistics of v = x (+ r) over n elements; stores v to s when Res.
// xn, rn (nullable): a later row, prefetched during pass b.
template <class T, bool Res, bool NT = false>
Stats layer_stats(const T* x, const T* r, T* s, int64_t n, float eps, const T* xn = nullptr,
                  const T* rn = nullptr) {
  RowMoments rm;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t nb = std::min(kBlock, n - b0);
    const T* xb = x + b0;
    const T* rb = Res ? r + b0 : nullptr;
    T* sb = Res ? s + b0 : nullptr;
    // Block pass a: sum (and the residual sum written out).
    const float bsum = block_reduce<T, Res, NT>(xb, rb, sb, nb, [](Vf a, Vf v) { return a + v; });
    rm.add(nb, block_moments<T, Res>(xb, rb, nb, bsum, xn ? xn + b0 : nullptr,
                                     Res && rn ? rn + b0 : nullptr));
  }
  return rm.stats(n, eps);
}

// RMS statistics: mean of v^2 (one read), v stored to s when Res.
template <class T, bool Res, bool NT = false>
Stats rms_stats(const T* x, const T* r, T* s, int64_t n, float eps) {
  double ss = 0;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t nb = std::min(kBlock, n - b0);
    const T* xb = x + b0;
    const T* rb = Res ? r + b0 : nullptr;
    T* sb = Res ? s + b0 : nullptr;
    ss += block_reduce<T, Res, NT>(xb, rb, sb, nb, [](Vf a, Vf v) { return fma(v, v, a); });
  }
  const double ms = n > 0 ? ss / static_cast<double>(n) : 0.0;
  return {0.0f, static_cast<float>(1.0 / std::sqrt(ms + static_cast<double>(eps)))};
}

// y = (v - mean) * scale * g + b over one row; the next row (xn, rn;
// nullable) is prefetched meanwhile, so memory never idles while this row
// is computed from L1.
template <class T, bool Res, bool NT>
void write_row(const T* x, const T* r, T* y, int64_t n, Stats st, const float* g, const float* b,
               const T* xn, const T* rn) {
  const Vf vm = set1(st.mean), vs = set1(st.scale);
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    if (xn && i % (64 / sizeof(T)) < 2 * kLanes) {
      prefetch_bytes(xn + i, 2 * kLanes * sizeof(T));
      if constexpr (Res) prefetch_bytes(rn + i, 2 * kLanes * sizeof(T));
    }
    const Vf t0 = (src<T, Res>(x, r, i) - vm) * vs, t1 = (src<T, Res>(x, r, i + kLanes) - vm) * vs;
    put<NT>(y + i, fma(t0, load(g + i), load(b + i)));
    put<NT>(y + i + kLanes, fma(t1, load(g + i + kLanes), load(b + i + kLanes)));
  }
  for (; i + kLanes <= n; i += kLanes) {
    const Vf t = (src<T, Res>(x, r, i) - vm) * vs;
    put<NT>(y + i, fma(t, load(g + i), load(b + i)));
  }
  if (i < n) {
    const int rem = static_cast<int>(n - i);
    const Vf t = (src_n<T, Res>(x, r, i, rem) - vm) * vs;
    store_n(y + i, fma(t, load_n(g + i, rem), load_n(b + i, rem)), rem);
  }
}

// Rows of n <= kBlock elements (one block), n a multiple of 4 vectors, no
// residual: row r's write pass and row r + 1's pass a (the pass that reads
// it from memory) in one loop, prefetching row r + 2, so the reads from
// memory and the streaming stores overlap, as in a copy, instead of
// alternating by pass; layer_norm's pass b then runs over row r + 1 in L1
// (on an AMD EPYC Zen 3, 1 thread, 64 MiB: rms_norm 4.4-5.1 -> 3.8-4.1 ms,
// layer_norm 3.9-4.3 -> 3.6-3.9 ms; layer_norm's prefetch in this loop
// rather than in pass b: 4.1-4.9 -> 3.7-4.4 ms). Row r + 1's sums are formed
// exactly as block_reduce forms them: the same bits as rms_stats /
// layer_stats.
template <class T, bool NT, bool Rms>
void rows_pipelined(const T* x, T* y, int64_t n, int64_t r0, int64_t r1, int64_t period, float eps,
                    const float* gamma, const float* beta) {
  Stats st = Rms ? rms_stats<T, false, NT>(x + r0 * n, nullptr, nullptr, n, eps)
                 : layer_stats<T, false, NT>(x + r0 * n, nullptr, nullptr, n, eps);
  for (int64_t row = r0; row < r1; ++row) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    const T* xn = row + 1 < r1 ? xr + n : nullptr;
    const T* xp = row + 2 < r1 ? xr + 2 * n : nullptr;
    const int64_t blk = (row / period) * n;
    const float* g = gamma + blk;
    const float* b = beta + blk;
    const Vf vm = set1(st.mean), vs = set1(st.scale);
    Vf a0 = zero(), a1 = zero(), a2 = zero(), a3 = zero();
    auto acc = [](Vf a, Vf v) {
      if constexpr (Rms)
        return fma(v, v, a);
      else
        return a + v;
    };
    for (int64_t i = 0; i < n; i += 4 * kLanes) {
      if (xn) {
        if (xp) prefetch_bytes(xp + i, 4 * kLanes * sizeof(T));
        a0 = acc(a0, load(xn + i));
        a1 = acc(a1, load(xn + i + kLanes));
        a2 = acc(a2, load(xn + i + 2 * kLanes));
        a3 = acc(a3, load(xn + i + 3 * kLanes));
      }
      for (int k = 0; k < 4; ++k) {
        const int64_t j = i + k * kLanes;
        const Vf t = (load(xr + j) - vm) * vs;
        put<NT>(yr + j, fma(t, load(g + j), load(b + j)));
      }
    }
    if (!xn) continue;
    const float sum = reduce_add((a0 + a1) + (a2 + a3));
    if constexpr (Rms) {
      const double ms = static_cast<double>(sum) / static_cast<double>(n);
      st = {0.0f, static_cast<float>(1.0 / std::sqrt(ms + static_cast<double>(eps)))};
    } else {
      RowMoments rm;
      rm.add(n, block_moments<T, false>(xn, nullptr, n, sum, nullptr, nullptr));
      st = rm.stats(n, eps);
    }
  }
}

template <class T, bool Res, bool Rms>
void rows_typed(const norm::RowArgs& a) {
  const T* x = static_cast<const T*>(a.x);
  const T* r = static_cast<const T*>(a.residual);
  T* y = static_cast<T*>(a.y);
  T* s = static_cast<T*>(a.sum_out);
  const int64_t n = a.cols;
  // Rows are the unit of work: a row is computed the same way whichever
  // thread runs it, so results are bit-identical for any thread count.
  const int64_t grain = std::max<int64_t>(1, 16384 / n);
  const bool nt = std::is_same_v<T, float> && kLanes > 1 &&
                  reinterpret_cast<uintptr_t>(y) % 64 == 0 &&
                  reinterpret_cast<uintptr_t>(s) % 64 == 0 && n % 16 == 0 &&
                  a.rows * n * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
  // The residual forms stay on the passes below: pipelined, with four
  // streams in one loop, add_rms_norm ran 8-12% slower (Zen 3, 1 thread).
  const bool piped = !Res && n <= kBlock && n % (4 * kLanes) == 0;
  parallel_for(a.rows, grain, [&](int64_t b, int64_t e) {
    if (piped) {
      if (nt)
        rows_pipelined<T, true, Rms>(x, y, n, b, e, a.period, a.eps, a.gamma, a.beta);
      else
        rows_pipelined<T, false, Rms>(x, y, n, b, e, a.period, a.eps, a.gamma, a.beta);
      if (nt) store_fence();
      return;
    }
    for (int64_t row = b; row < e; ++row) {
      const int64_t off = row * n;
      const T* rr = Res ? r + off : nullptr;
      T* sr = Res ? s + off : nullptr;
      const int64_t blk = (row / a.period) * n;
      // Two rows ahead: one row's compute is shorter than a DRAM round trip.
      const T* xn = row + 2 < e ? x + off + 2 * n : nullptr;
      const T* rn = Res && row + 2 < e ? r + off + 2 * n : nullptr;
      // layer_norm prefetches during its pass b (the statistics' pass over
      // the row in L1), RMS during the write: on an AMD EPYC (Zen 3) the
      // prefetches in layer_norm's write pass queued behind its streaming
      // stores and memory idled through pass b (0.64-0.77 -> 0.77-0.90 of the
      // copy bandwidth at 1 thread); in the pass that reads the row from
      // memory they slowed both norms.
      const Stats st = nt ? (Rms ? rms_stats<T, Res, true>(x + off, rr, sr, n, a.eps)
                                 : layer_stats<T, Res, true>(x + off, rr, sr, n, a.eps, xn, rn))
                          : (Rms ? rms_stats<T, Res, false>(x + off, rr, sr, n, a.eps)
                                 : layer_stats<T, Res, false>(x + off, rr, sr, n, a.eps, xn, rn));
      const T* wx = Rms ? xn : nullptr;  // the write pass's prefetch
      const T* wr = Rms ? rn : nullptr;
      if (nt)
        write_row<T, Res, true>(x + off, rr, y + off, n, st, a.gamma + blk, a.beta + blk, wx, wr);
      else
        write_row<T, Res, false>(x + off, rr, y + off, n, st, a.gamma + blk, a.beta + blk, wx, wr);
    }
    if (nt) store_fence();
  });
}

template <class T>
void rows_t(const norm::RowArgs& a) {
  const bool res = a.residual != nullptr;
  if (a.rms) return res ? rows_typed<T, true, true>(a) : rows_typed<T, false, true>(a);
  return res ? rows_typed<T, true, false>(a) : rows_typed<T, false, false>(a);
}

inline void run_rows(const norm::RowArgs& a) {
  if (a.rows <= 0 || a.cols <= 0) return;
  switch (a.t) {
    case DType::f32:
      return rows_t<float>(a);
    case DType::bf16:
      return rows_t<bf16>(a);
    case DType::f16:
      return rows_t<f16>(a);
    default:
      return;
  }
}

// y = act((x - m) * sa + sb) over one plane of hw elements.
template <class T, bool Silu>
void apply_plane(const T* x, T* y, int64_t hw, float m, float sa, float sb) {
  const Vf vm = set1(m), va = set1(sa), vb = set1(sb);
  auto f = [&](Vf v) {
    Vf t = fma(v - vm, va, vb);
    if constexpr (Silu) t = act_silu(t);
    return t;
  };
  // Lane-wise pairs: bf16 in the unpack order its loads and stores are
  // cheaper in (vec_avx2.h), the same operations on every element.
  map_lanewise(x, y, hw, f);
}

template <class T, bool Silu>
void channels_typed(const norm::ChannelArgs& a) {
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  if (a.stats) {
    const int64_t cpg = a.c / a.groups, span = cpg * a.hw;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(span, 1));
    parallel_for(a.n * a.groups, grain, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t ni = t / a.groups, gi = t % a.groups;
        const int64_t base = (ni * a.c + gi * cpg) * a.hw;
        const Stats st = layer_stats<T, false>(x + base, nullptr, nullptr, span, a.eps);
        for (int64_t ch = 0; ch < cpg; ++ch) {
          const int64_t cc = gi * cpg + ch;
          apply_plane<T, Silu>(x + base + ch * a.hw, y + base + ch * a.hw, a.hw, st.mean,
                               st.scale * a.gamma[cc], a.beta[cc]);
        }
      }
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(a.hw, 1));
  parallel_for(a.n * a.c, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t cc = t % a.c;
      apply_plane<T, Silu>(x + t * a.hw, y + t * a.hw, a.hw, a.mean ? a.mean[cc] : 0.0f,
                           a.gamma[cc], a.beta[cc]);
    }
  });
}

template <class T>
void channels_t(const norm::ChannelArgs& a) {
  return a.silu ? channels_typed<T, true>(a) : channels_typed<T, false>(a);
}

inline void run_channels(const norm::ChannelArgs& a) {
  if (a.n <= 0 || a.c <= 0 || a.hw <= 0) return;
  switch (a.t) {
    case DType::f32:
      return channels_t<float>(a);
    case DType::bf16:
      return channels_t<bf16>(a);
    case DType::f16:
      return channels_t<f16>(a);
    default:
      return;
  }
}

}  // namespace norm_k

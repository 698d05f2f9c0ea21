// softmax / log_softmax written once over the vec_*.h names; included by
// softmax_{scalar,avx2,avx512}.cc inside their ISA namespace.
//
// Numerically stable: the maximum of each row is subtracted before exp.
// Last axis (inner == 1): rows are software-pipelined in three stages (max;
// exp and sum into an L1 scratch; scale), see rows_pipelined. Other axes:
// chunks of up to kColChunk contiguous columns walk the axis row by row with
// an online per-column max and sum (two reads of x, contiguous loads; the
// sums are rescaled only when a maximum grows, so mostly one exp a value).

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

#include "ops/common/stream_kernels.inc"  // kStreamBytes, put<NT>, prefetch_bytes

// Row lengths up to this keep exp(x - max) in an L1-resident f32 scratch
// between the sum and the write stage; longer rows (and log_softmax)
// recompute from x.
inline constexpr int64_t kScratch = 4096;

// ---- last axis -----------------------------------------------------------
// A row is three stages; each runs the same operations in the same order
// wherever it is called from, so a row's result never depends on which rows
// (or thread) came before it:
//   M  the maximum (the stage that reads x from memory),
//   E  e = exp(x - max) and their sum (x now in L1),
//   W  y = e * (1 / sum) (or x - max - log(sum) for log_softmax).
// Each stage walks pairs of vectors, then single vectors, then a masked tail.
// A pair adds one operation to its stage's running maximum or sum (the second
// accumulator serves the tail only): with three stages in one loop, AVX2's 16
// registers do not hold two accumulators per stage, and a spilled one put a
// store-to-load round trip on the loop's critical path.
// The exps and their sum carry the factor kPow2RawScale (vexp_nonpos_scaled),
// which cancels in e / sum (and is taken out of the sum for log_softmax).

template <class T>
inline void max_pair(const T* x, int64_t i, Vf& m0) {
  m0 = max(m0, max(load(x + i), load(x + i + kLanes)));
}
template <class T>
inline float max_finish(const T* x, int64_t i, int64_t n, Vf m0) {
  for (; i + kLanes <= n; i += kLanes) m0 = max(m0, load(x + i));
  if (i < n) {
    const int r = static_cast<int>(n - i);
    m0 = max(m0, pad_n(load_n(x + i, r), r, kNegInf));
  }
  return reduce_max(m0);
}

// E with the exps kept in `e` (e == nullptr: sum only).
template <class T>
inline void exp_pair(const T* x, float* e, int64_t i, Vf vm, Vf& s0) {
  const Vf e0 = vexp_nonpos_scaled(load(x + i) - vm),
           e1 = vexp_nonpos_scaled(load(x + i + kLanes) - vm);
  s0 = s0 + (e0 + e1);
  if (e) {
    store(e + i, e0);
    store(e + i + kLanes, e1);
  }
}
template <class T>
inline float exp_finish(const T* x, float* e, int64_t i, int64_t n, Vf vm, Vf s0) {
  for (; i + kLanes <= n; i += kLanes) {
    const Vf v = vexp_nonpos_scaled(load(x + i) - vm);
    s0 = s0 + v;
    if (e) store(e + i, v);
  }
  if (i < n) {
    const int r = static_cast<int>(n - i);
    const Vf v = pad_n(vexp_nonpos_scaled(load_n(x + i, r) - vm), r, 0.0f);
    s0 = s0 + v;
    if (e) store_n(e + i, v, r);
  }
  return reduce_add(s0);
}

// W from the kept exps.
template <bool NT, class T>
inline void write_pair(const float* e, T* y, int64_t i, Vf inv) {
  put<NT>(y + i, load(e + i) * inv);
  put<NT>(y + i + kLanes, load(e + i + kLanes) * inv);
}
template <bool NT, class T>
inline void write_finish(const float* e, T* y, int64_t i, int64_t n, Vf inv) {
  for (; i + kLanes <= n; i += kLanes) put<NT>(y + i, load(e + i) * inv);
  if (i < n) {
    const int r = static_cast<int>(n - i);
    store_n(y + i, load_n(e + i, r) * inv, r);
  }
}

inline int64_t pairs_end(int64_t n) { return n / (2 * kLanes) * (2 * kLanes); }

// One row without a scratch (log_softmax, rows longer than kScratch): M, E
// (sum only), then W recomputing from x. `xn` (nullable) is prefetched.
template <bool NT, class T>
void row(const T* x, T* y, int64_t n, bool log, const T* xn) {
  const int64_t n2 = pairs_end(n);
  Vf m0 = set1(kNegInf);
  for (int64_t i = 0; i < n2; i += 2 * kLanes) max_pair(x, i, m0);
  const float mx = max_finish(x, n2, n, m0);
  const Vf vm = set1(mx);
  Vf s0 = zero();
  for (int64_t i = 0; i < n2; i += 2 * kLanes) {
    if (xn && i % (64 / sizeof(T)) < 2 * kLanes) prefetch_bytes(xn + i, 2 * kLanes * sizeof(T));
    exp_pair(x, static_cast<float*>(nullptr), i, vm, s0);
  }
  const float sum = exp_finish(x, static_cast<float*>(nullptr), n2, n, vm, s0);
  int64_t i = 0;
  if (log) {
    const Vf c = set1(mx + std::log(sum * (1.0f / kPow2RawScale)));
    for (; i + kLanes <= n; i += kLanes) put<NT>(y + i, load(x + i) - c);
    if (i < n) {
      const int r = static_cast<int>(n - i);
      store_n(y + i, load_n(x + i, r) - c, r);
    }
    return;
  }
  const Vf inv = set1(1.0f / sum);
  for (; i + kLanes <= n; i += kLanes) put<NT>(y + i, vexp_nonpos_scaled(load(x + i) - vm) * inv);
  if (i < n) {
    const int r = static_cast<int>(n - i);
    store_n(y + i, vexp_nonpos_scaled(load_n(x + i, r) - vm) * inv, r);
  }
}

// One step of the row pipeline: M of one row (xm), E of the next older row
// (xe, exps into se) and W of the row before that (from sw into y), in one
// walk over the columns, so each row's reduction latency hides behind the
// other stages and M's loads from memory overlap E's arithmetic.
template <bool NT, class T, bool M, bool E, bool W>
void pipe_step(int64_t n, const T* xm, float* mx, const T* xe, float* se, Vf vme, float* sum,
               const float* sw, T* y, Vf inv, const T* pf) {
  Vf m0 = set1(kNegInf), s0 = zero();
  const int64_t n2 = pairs_end(n);
  for (int64_t i = 0; i < n2; i += 2 * kLanes) {
    if (pf && i % (64 / sizeof(T)) < 2 * kLanes) prefetch_bytes(pf + i, 2 * kLanes * sizeof(T));
    if constexpr (M) max_pair(xm, i, m0);
    if constexpr (E) exp_pair(xe, se, i, vme, s0);
    if constexpr (W) write_pair<NT>(sw, y, i, inv);
  }
  if constexpr (M) *mx = max_finish(xm, n2, n, m0);
  if constexpr (E) *sum = exp_finish(xe, se, n2, n, vme, s0);
  if constexpr (W) write_finish<NT>(sw, y, n2, n, inv);
}

// Softmax of rows [b, e) of length n <= kScratch; step a does M of row a+2,
// E of row a+1 and W of row a. `scratch` holds 2 * kScratch floats.
template <bool NT, class T>
void rows_pipelined(const T* x, T* y, int64_t n, int64_t b, int64_t e, float* scratch) {
  float mx[3] = {}, sum[2] = {};
  for (int64_t a = b - 2; a < e; ++a) {
    const int64_t rm = a + 2, re = a + 1, rw = a;
    const bool M = rm < e, E = re >= b && re < e, W = rw >= b;
    // M reads row rm; rows three ahead of it are prefetched meanwhile.
    const T* xm = M ? x + rm * n : nullptr;
    const T* pf = M && rm + 3 < e ? x + (rm + 3) * n : nullptr;
    const T* xe = E ? x + re * n : nullptr;
    float* se = E ? scratch + (re & 1) * kScratch : nullptr;
    const float* sw = W ? scratch + (rw & 1) * kScratch : nullptr;
    T* yw = W ? y + rw * n : nullptr;
    const Vf vme = set1(E ? mx[re % 3] : 0.0f);
    const Vf inv = set1(W ? 1.0f / sum[rw & 1] : 0.0f);
    float* mo = &mx[rm % 3];
    float* so = &sum[(re & 1)];
    switch ((M ? 4 : 0) | (E ? 2 : 0) | (W ? 1 : 0)) {
      case 7:
        pipe_step<NT, T, true, true, true>(n, xm, mo, xe, se, vme, so, sw, yw, inv, pf);
        break;
      case 6:
        pipe_step<NT, T, true, true, false>(n, xm, mo, xe, se, vme, so, sw, yw, inv, pf);
        break;
      case 5:
        pipe_step<NT, T, true, false, true>(n, xm, mo, xe, se, vme, so, sw, yw, inv, pf);
        break;
      case 4:
        pipe_step<NT, T, true, false, false>(n, xm, mo, xe, se, vme, so, sw, yw, inv, pf);
        break;
      case 3:
        pipe_step<NT, T, false, true, true>(n, xm, mo, xe, se, vme, so, sw, yw, inv, pf);
        break;
      case 2:
        pipe_step<NT, T, false, true, false>(n, xm, mo, xe, se, vme, so, sw, yw, inv, pf);
        break;
      case 1:
        pipe_step<NT, T, false, false, true>(n, xm, mo, xe, se, vme, so, sw, yw, inv, pf);
        break;
      default:
        break;
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

// Softmax over n rows spaced `inner` elements apart, for `width` (<= kColChunk)
// contiguous columns. Pass 1 walks the rows in order, each row's segment
// contiguously (one stream through memory; the per-column maximum and sum stay
// in L1), with an online maximum and rescaled sum; pass 2 writes. Each column
// sees the same operations in the same order whatever the chunking, so
// results do not depend on the thread count.
template <class T>
void columns(const T* x, T* y, int64_t n, int64_t inner, int64_t width, bool log) {
  alignas(64) float m[kColChunk], s[kColChunk];
  const Vf lowest = set1(-std::numeric_limits<float>::max());
  for (int64_t j = 0; j < width; j += kLanes) {
    stc(m, j, width, lowest);
    stc(s, j, width, zero());
  }
  const int64_t line = 64 / static_cast<int64_t>(sizeof(T));
  for (int64_t a = 0; a < n; ++a) {
    const T* xa = x + a * inner;
    const T* xn = a + 1 < n ? xa + inner : nullptr;
    for (int64_t j = 0; j < width; j += kLanes) {
      if (xn && j % line == 0) __builtin_prefetch(xn + j);  // the next row
      const Vf v = ldc(xa, j, width), mo = ldc(m, j, width);
      if (any(mo < v)) {
        // Some lane's maximum grows: rescale the sums. Lanes whose maximum
        // stays get exp(0) = 1 exactly, i.e. so + exp(v - mo) as below, so
        // the branch changes the speed, never the result.
        const Vf mn = max(mo, v);
        stc(s, j, width, fma(ldc(s, j, width), vexp_nonpos(mo - mn), vexp_nonpos(v - mn)));
        stc(m, j, width, mn);
      } else {  // the common case once the first rows are seen: one exp
        stc(s, j, width, ldc(s, j, width) + vexp_nonpos(v - mo));  // NaN in v: sum NaN
      }
    }
  }
  for (int64_t j = 0; j < width; j += kLanes) {
    if (log)
      stc(m, j, width, ldc(m, j, width) + vlog(ldc(s, j, width)));
    else
      stc(s, j, width, set1(1.0f) / ldc(s, j, width));
  }
  for (int64_t a = 0; a < n; ++a) {
    const T* xa = x + a * inner;
    const T* xn = a + 1 < n ? xa + inner : nullptr;
    T* ya = y + a * inner;
    for (int64_t j = 0; j < width; j += kLanes) {
      if (xn && j % line == 0) __builtin_prefetch(xn + j);
      const Vf v = ldc(xa, j, width), mv = ldc(m, j, width);
      sty(ya, j, width, log ? v - mv : vexp_nonpos(v - mv) * ldc(s, j, width));
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
    const bool pipe = !log && n <= kScratch;
    parallel_for(outer, grain, [&](int64_t b, int64_t e) {
      if (pipe) {
        alignas(64) float scratch[2 * kScratch];
        if (nt)
          rows_pipelined<true>(x, y, n, b, e, scratch);
        else
          rows_pipelined<false>(x, y, n, b, e, scratch);
      } else {
        for (int64_t r = b; r < e; ++r) {
          // Three rows ahead: one row of compute is shorter than a DRAM round trip.
          const T* xn = r + 3 < e ? x + (r + 3) * n : nullptr;
          if (nt)
            row<true>(x + r * n, y + r * n, n, log, xn);
          else
            row<false>(x + r * n, y + r * n, n, log, xn);
        }
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

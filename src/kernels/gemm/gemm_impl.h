// The GEMM engine written once over the vec_*.h names; included by
// gemm_{scalar,avx2,avx512}.cc inside their ISA namespace (after the vec header).
// Expects: KERNEL_LIST(X) with X(MR, NV) entries, the ISA's microkernels.

namespace detail {

using gemm::Act;
using gemm::Epilogue;
using gemm::MatView;
using gemm::OutView;
using gemm::Params;

// Per-thread buffers grown on demand: the scratch of runs given no workspace
// (the side APIs outside Op, whose callers hold no workspace).
struct GrownBuf {
  float* p = nullptr;
  size_t n = 0;
  ~GrownBuf() { aligned_free(p); }
  float* get(size_t floats) {
    if (floats > n) {
      aligned_free(p);
      p = static_cast<float*>(aligned_alloc_bytes(floats * sizeof(float)));
      n = floats;
    }
    return p;
  }
};
enum class ScratchUse { a, c, split, pairs };
template <ScratchUse U>
inline GrownBuf& grown() {
  static thread_local GrownBuf s;
  return s;
}

// One run's scratch: slices of the caller's workspace (gemm::Workspace, laid
// out by scratch_layout), or the grown buffers when it has none.
struct Scratch {
  float* base = nullptr;
  gemm::ScratchLayout l;
  int threads = 1;

  Scratch(const gemm::Workspace& ws, const Params& p, int64_t M, int64_t N, int64_t K,
          const OutView& c, bool gated)
      : base(static_cast<float*>(ws.p)),
        threads(ws.p ? std::max(1, std::min(ws.threads, num_threads())) : num_threads()) {
    if (base) l = gemm::scratch_layout(p, M, N, K, c.t, c.ld, gated);
  }
  float* slot() const {
    return base + static_cast<size_t>(threads == 1 ? 0 : thread_index()) * l.slot();
  }
  float* a(size_t n) const { return base ? fit(slot(), n, l.a) : grown<ScratchUse::a>().get(n); }
  float* c(size_t n) const {
    return base ? fit(slot() + l.a, n, l.c) : grown<ScratchUse::c>().get(n);
  }
  float* split(size_t n) const {
    return base ? fit(base + static_cast<size_t>(threads) * l.slot(), n, l.split)
                : grown<ScratchUse::split>().get(n);
  }
  float* pairs(size_t n) const {
    return base ? fit(base + static_cast<size_t>(threads) * l.slot() + l.split, n, l.pairs)
                : grown<ScratchUse::pairs>().get(n);
  }
  // A slice past what scratch_layout sized is a bug in one of the two.
  static float* fit(float* p, size_t n, size_t cap) {
    if (n > cap) ::opsnn::gemm::fail_scratch_overflow(n, cap);
    return p;
  }
};

template <class T>
inline float elem(const T* p, int64_t i) {
  return to_f32(p[i]);
}

#include "kernels/gemm/epilogue_impl.h"

// The end of every microkernel: the MR x NV accumulator tile (Vf or the ISA's
// raw vector) added to (accumulate) or written over the rows of c, ncols valid
// columns. Fully unrolled, the masked tail too, so the accumulators never
// leave the registers.
template <int MR, int NV, class A>
__attribute__((always_inline)) inline void store_acc(const A (&acc)[MR][NV], float* c, int64_t ldc,
                                                     int ncols, bool accumulate) {
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const int n = ncols - v * kLanes;
      float* p = c + i * ldc + v * kLanes;
      const Vf x{acc[i][v]};
      if (n >= kLanes) {
        store(p, accumulate ? load(p) + x : x);
      } else if (n > 0) {
        store_n(p, accumulate ? load_n(p, n) + x : x, n);
      }
    }
}

// One k row of NV B vectors from a panel: bf16 vector pairs in the ISA's
// unpack order where it packs them so (kBf16PanelPairs, swizzle_bf16_rows).
template <int NV, class TB>
__attribute__((always_inline)) inline void load_b_row(const TB* p, Vf (&bv)[NV]) {
  if constexpr (std::is_same_v<TB, bf16> && kBf16PanelPairs) {
#pragma GCC unroll 8
    for (int v = 0; v + 1 < NV; v += 2) load_bf16_pair(p + v * kLanes, bv[v], bv[v + 1]);
    if constexpr (NV % 2 == 1) bv[NV - 1] = load(p + (NV - 1) * kLanes);
  } else {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = load(p + v * kLanes);
  }
}

// ---- microkernel: MR x (NV*kLanes) accumulators in registers ---------------
// a(i, k) = a[i*a_rs + k*a_cs]; b(k, j) = b[k*ldb + j] for j < NV*kLanes (padded);
// c(i, j) = c[i*ldc + j] for j < ncols. accumulate: c += a·b, else c = a·b.
// 4 KiB: 64 rows of a 16-column f32 panel (AVX2), 128 of bf16. With 2 KiB, M = 8
// f32 decode ran 5-10% slower.
// Locality of the weight stream's software prefetches: prefetcht1 (into L2).
// prefetchnta (0) halved decode on an Intel Xeon (Emerald Rapids, AVX2 and
// AVX-512: f32 1x4096x4096 at 40-50% of a plain read, against 95-105% with
// t1; t0 within noise of t1): it keeps the lines out of L2. The unpacked (op
// form) kernels use the same hint.
inline constexpr int kPfLocality = 2;
inline constexpr int64_t kPfBytes = 4096;
// The weight stream's prefetch in the decode kernels (ukr, ukr_eb): at step
// k the lines of [pf + k pf_bytes, pf + (k + 1) pf_bytes) (decode_prefetch).
__attribute__((always_inline)) inline void prefetch_step(const char* pf, int pf_bytes, int64_t k) {
  const char* p = pf + k * pf_bytes;
  for (int o = 0; o < pf_bytes; o += 64) __builtin_prefetch(p + o, 0, kPfLocality);
}
template <int MR, int NV, class TB>
void ukr(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs, const TB* b, int64_t ldb, float* c,
         int64_t ldc, int ncols, bool accumulate, const char* pf, int pf_bytes) {
  Vf acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = zero();
  for (int64_t k = 0; k < kc; ++k) {
    Vf bv[NV];
    load_b_row(b + k * ldb, bv);
    prefetch_step(pf, pf_bytes, k);
    const float* ak = a + k * a_cs;
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const Vf av = set1(ak[i * a_rs]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = fma(av, bv[v], acc[i][v]);
    }
  }
  store_acc(acc, c, ldc, ncols, accumulate);
}

// The last K-block of a trivial epilogue with a bf16 output: the sums (plus
// c when accumulating: c + acc, as store_acc adds) rounded to bf16 into the
// output rows ob (stride ldo), with no f32 pass over the tile afterwards.
// Streamed (non-temporally) only where a tile row is whole cache lines.
template <int MR, int NV>
__attribute__((always_inline)) inline void store_acc_bf16(const Vf (&acc)[MR][NV], const float* c,
                                                          int64_t ldc, int ncols, bool accumulate,
                                                          bf16* ob, int64_t ldo, bool stream) {
  constexpr bool kWholeLines = NV * kLanes * sizeof(bf16) % 64 == 0;
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const int n = std::min(ncols - v * kLanes, kLanes);
      if (n <= 0) continue;
      const float* p = c + i * ldc + v * kLanes;
      const Vf y = !accumulate   ? acc[i][v]
                   : n == kLanes ? load(p) + acc[i][v]
                                 : load_n(p, n) + acc[i][v];
      store_out(ob + i * ldo + v * kLanes, y, n, kWholeLines && stream);
    }
}

// The packed-A microkernel (the hot one): a is an MR-row panel (element
// (i, k) at a[k*MR + i]), b an NR-column panel (b[k*NR + j]); all strides
// are compile-time constants, so the loop is pointer bumps, MR broadcasts and
// MR*NV FMAs per k. Every tile shape is unrolled (also the masked column tail),
// so the accumulators never leave the registers.
// ob != nullptr: the result goes to the bf16 output rows ob (store_acc_bf16)
// instead of c.
template <int MR, int AS, int NV, class TB>
void ukr_p(int64_t kc, const float* a, const TB* b, float* c, int64_t ldc, int ncols,
           bool accumulate, bf16* ob, int64_t ldo, bool stream) {
  constexpr int NR = NV * kLanes;
  Vf acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    __builtin_prefetch(c + i * ldc, 1, 3);
    if constexpr (NV * kLanes * 4 > 64) __builtin_prefetch(c + i * ldc + NR - 1, 1, 3);
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = zero();
  }
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    Vf bv[NV];
    load_b_row(b, bv);
    __builtin_prefetch(b + 8 * NR, 0, 3);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const Vf av = set1(a[i]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = fma(av, bv[v], acc[i][v]);
    }
    a += AS;
    b += NR;
  }
  if (ob)
    store_acc_bf16(acc, c, ldc, ncols, accumulate, ob, ldo, stream);
  else
    store_acc(acc, c, ldc, ncols, accumulate);
}

template <class TB>
using UkrPFn = void (*)(int64_t, const float*, const TB*, float*, int64_t, int, bool, bf16*,
                        int64_t, bool);

template <int NV, class TB, int... Ms>
constexpr auto ukr_p_table(std::integer_sequence<int, Ms...>) {
  return std::array<UkrPFn<TB>, sizeof...(Ms)>{&ukr_p<Ms + 1, sizeof...(Ms), NV, TB>...};
}

template <class TB>
using UkrFn = void (*)(int64_t, const float*, int64_t, int64_t, const TB*, int64_t, float*, int64_t,
                       int, bool, const char*, int);

#if defined(__AVX512F__)
// The AVX-512 decode kernel: ukr with each A element folded into its FMAs as
// an embedded broadcast (vfmadd231ps m32{1to16}): per k, NV loads and MR*NV
// FMAs, no separate broadcast instructions. Fewer instructions per weight
// byte let the out-of-order window (and so the demand loads) run further
// ahead of the FMAs on the weight stream: M = 8 decode overlaps its compute
// with the streaming (bf16 via ukr_dp_eb, same idea). Same FMA (acc + a*b,
// one rounding) in the same order as ukr: the same bits.
// Prefetch distance of the weight stream: 64 rows (8 KiB of 14x32 f32
// panels); at M = 8 the loop runs at FMA speed between misses, so 4 KiB
// covered too little of the memory latency (A/B in docs/gemm.md).
inline constexpr int kPfRowsEb = 64;
template <int MR, int NV, class TB>
void ukr_eb(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs, const TB* b, int64_t ldb,
            float* c, int64_t ldc, int ncols, bool accumulate, const char* pf, int pf_bytes) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    Vf bv[NV];
    load_b_row(b + k * ldb, bv);
    prefetch_step(pf, pf_bytes, k);
    const float* ak = a + k * a_cs;
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v)
        asm("vfmadd231ps %[a]%{1to16%}, %[b], %[c]"
            : [c] "+v"(acc[i][v])
            : [b] "v"(bv[v].v), [a] "m"(ak[i * a_rs]));
  }
  store_acc(acc, c, ldc, ncols, accumulate);
}
#endif

// Rows of a panel that the decode kernels prefetch ahead of their loads.
template <int NV, class TB>
constexpr int64_t decode_pf_rows() {
#if defined(__AVX512F__)
  return kPfRowsEb;
#else
  return kPfBytes / (NV * kLanes * static_cast<int64_t>(sizeof(TB)));
#endif
}

// The strided-A (decode) kernels, rows 1..MR.
template <int MR, int NV, class TB>
constexpr UkrFn<TB> decode_ukr() {
#if defined(__AVX512F__)
  return &ukr_eb<MR, NV, TB>;
#else
  return &ukr<MR, NV, TB>;
#endif
}
template <int NV, class TB, int... Ms>
constexpr auto ukr_table(std::integer_sequence<int, Ms...>) {
  return std::array<UkrFn<TB>, sizeof...(Ms)>{decode_ukr<Ms + 1, NV, TB>()...};
}

template <class T>
inline T from_f32(float v);
template <>
inline float from_f32<float>(float v) {
  return v;
}
template <>
inline bf16 from_f32<bf16>(float v) {
  return opsnn::to_bf16(v);
}
template <>
inline f16 from_f32<f16>(float v) {
  return opsnn::to_f16(v);
}

// ---- packing ------------------------------------------------------------------
// Source column of packed panel `pnl`, column t (< nr); -1: zero padding.
// Plain: pnl*nr + t. Gated (N = 2H): the first nr/2 columns of a panel are
// gate columns pnl*nr/2 + t, the last nr/2 the value columns H + the same.
inline int64_t packed_col(int64_t pnl, int t, int nr, int64_t N, bool gated) {
  if (!gated) {
    const int64_t j = pnl * nr + t;
    return j < N ? j : -1;
  }
  const int half = nr / 2;
  const int64_t H = N / 2, j = pnl * half + (t < half ? t : t - half);
  return j < H ? (t < half ? j : H + j) : -1;
}
inline int64_t packed_panels(int64_t N, int nr, bool gated) {
  return gated ? (N / 2 + nr / 2 - 1) / (nr / 2) : (N + nr - 1) / nr;
}

template <class T, class TP>
void pack_b_t(int64_t K, int64_t N, const T* b, int64_t rs, int64_t cs, int nr, TP* dst,
              bool gated) {
  const TP z = from_f32<TP>(0.0f);
  const int64_t npan = packed_panels(N, nr, gated);
  parallel_for(npan, 1, [&](int64_t p0, int64_t p1) {
    // Row-major B: 16 rows at a time across the thread's panels, so each row
    // is read front to back (panel by panel, K rows each, read 16 streams a
    // page or more apart; per-call packing at M = 64 cost 50% of the call).
    if (cs == 1 && !gated) {
      for (int64_t k0 = 0; k0 < K; k0 += 16)
        for (int64_t pnl = p0; pnl < p1; ++pnl) {
          const int64_t j0 = pnl * nr;
          const int cols = static_cast<int>(N - j0 < nr ? N - j0 : nr);
          for (int64_t k = k0; k < std::min(K, k0 + 16); ++k) {
            const T* s = b + k * rs + j0;
            TP* o = dst + pnl * K * nr + k * nr;
            int j = 0;
            if constexpr (std::is_same_v<T, TP>)
              for (; j < cols; ++j) o[j] = s[j];
            else
              for (; j < cols; ++j) o[j] = from_f32<TP>(to_f32(s[j]));
            for (; j < nr; ++j) o[j] = z;
          }
        }
      return;
    }
    for (int64_t pnl = p0; pnl < p1; ++pnl) {
      TP* d = dst + pnl * K * nr;
      if (cs == 1) {
        // Gated: two contiguous half-panels per k row.
        const int half = nr / 2;
        const int64_t H = N / 2, g0 = pnl * half;
        const int hc = static_cast<int>(H - g0 < half ? H - g0 : half);
        for (int64_t k = 0; k < K; ++k) {
          TP* o = d + k * nr;
          for (int h = 0; h < 2; ++h) {
            const T* s = b + k * rs + g0 + h * H;
            int j = 0;
            for (; j < hc; ++j) o[h * half + j] = from_f32<TP>(to_f32(s[j]));
            for (; j < half; ++j) o[h * half + j] = z;
          }
        }
      } else {
        // Column-major-ish source (e.g. a transposed weight): walk columns.
        for (int j = 0; j < nr; ++j) {
          const int64_t sc = packed_col(pnl, j, nr, N, gated);
          if (sc >= 0) {
            const T* s = b + sc * cs;
            for (int64_t k = 0; k < K; ++k) d[k * nr + j] = from_f32<TP>(to_f32(s[k * rs]));
          } else {
            for (int64_t k = 0; k < K; ++k) d[k * nr + j] = z;
          }
        }
      }
    }
  });
}

// bf16 panel rows into the order load_b_row reads (kBf16PanelPairs): in each
// group of 2 * kLanes columns, 128-bit lane l of the stored row holds columns
// 4l..4l+3 in its low half and kLanes+4l..kLanes+4l+3 in its high half, so
// that vpunpck{l,h}wd against zero give columns [0, kLanes) and
// [kLanes, 2 kLanes) (AVX2: quarters 1 and 2 swapped).
inline void swizzle_bf16_rows(bf16* d, int64_t rows, int nr) {
  parallel_for(rows, 256, [&](int64_t r0, int64_t r1) {
    bf16 tmp[2 * kLanes];
    for (int64_t r = r0; r < r1; ++r)
      for (int g = 0; g + 2 * kLanes <= nr; g += 2 * kLanes) {
        bf16* row = d + r * nr + g;
        std::copy(row, row + 2 * kLanes, tmp);
        for (int p = 0; p < 2 * kLanes; ++p) {
          const int l = p / 8, q = p % 8;
          row[p] = tmp[q < 4 ? 4 * l + q : kLanes + 4 * l + q - 4];
        }
      }
  });
}

template <class TP>
void pack_b_to(int nr, int64_t K, int64_t N, const MatView& b, TP* dst, bool gated) {
  switch (b.t) {
    case DType::f32:
      pack_b_t(K, N, static_cast<const float*>(b.p), b.rs, b.cs, nr, dst, gated);
      break;
    case DType::bf16:
      pack_b_t(K, N, static_cast<const bf16*>(b.p), b.rs, b.cs, nr, dst, gated);
      break;
    case DType::f16:
      pack_b_t(K, N, static_cast<const f16*>(b.p), b.rs, b.cs, nr, dst, gated);
      break;
    default:
      return;
  }
  if constexpr (std::is_same_v<TP, bf16> && kBf16PanelPairs)
    swizzle_bf16_rows(dst, packed_panels(N, nr, gated) * K, nr);
}

inline void pack_b(int nr, int64_t K, int64_t N, const MatView& b, void* dst, DType pt,
                   bool gated) {
  switch (pt) {
    case DType::bf16:
      return pack_b_to(nr, K, N, b, static_cast<bf16*>(dst), gated);
    case DType::f16:
      return pack_b_to(nr, K, N, b, static_cast<f16*>(dst), gated);
    default:
      return pack_b_to(nr, K, N, b, static_cast<float*>(dst), gated);
  }
}

#if defined(__AVX512F__)
// Columns [k, k + 16) of MR <= 16 rows of 32-bit words (row i at src[i]),
// transposed in registers: dst[j*ld + i] = src[i][k + j]. The scalar copy it
// replaces was one load and one store per element and cost ~15% of
// 4096x320x320.
template <int MR>
inline void transpose_cols16(const float* const* src, int64_t k, float* dst, int64_t ld = MR) {
  static_assert(MR <= kLanes);
  Vf r[kLanes];
#pragma GCC unroll 16
  for (int i = 0; i < kLanes; ++i) r[i] = i < MR ? load(src[i] + k) : zero();
  transpose_lanes(r);
  constexpr __mmask16 m = static_cast<__mmask16>((1u << MR) - 1);
#pragma GCC unroll 16
  for (int j = 0; j < kLanes; ++j) _mm512_mask_storeu_ps(dst + j * ld, m, r[j].v);
}
#endif

// Rows [m0, m0+mlen) x cols [k0, k0+kl) of A into MR-row panels: panel r at
// dst + r*MR*kl, element (i, k) at [k*MR + i]. A full panel is written in
// store order (k outer, the MR rows inner, reads from MR row streams that stay
// in L1): sequential stores, ~2x faster than row-by-row strided stores.
template <int MR, class T>
void pack_a_t(const T* a, int64_t rs, int64_t cs, int64_t m0, int64_t mlen, int64_t k0, int64_t kl,
              float* dst) {
  for (int64_t r0 = 0; r0 < mlen; r0 += MR) {
    float* d = dst + r0 * kl;
    const int rows = static_cast<int>(mlen - r0 < MR ? mlen - r0 : MR);
    const T* s = a + (m0 + r0) * rs + k0 * cs;
    if (rows == MR && cs == 1) {
      const T* sr[MR];
      for (int i = 0; i < MR; ++i) sr[i] = s + i * rs;
      int64_t k = 0;
#if defined(__AVX512F__)
      if constexpr (MR <= 16 && std::is_same_v<T, float>)
        for (; k + 16 <= kl; k += 16) transpose_cols16<MR>(sr, k, d + k * MR);
#endif
      for (; k < kl; ++k) {
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) d[k * MR + i] = to_f32(sr[i][k]);
      }
      continue;
    }
    for (int i = 0; i < rows; ++i) {
      const T* si = s + i * rs;
      if (cs == 1)
        for (int64_t k = 0; k < kl; ++k) d[k * MR + i] = to_f32(si[k]);
      else
        for (int64_t k = 0; k < kl; ++k) d[k * MR + i] = to_f32(si[k * cs]);
    }
  }
}

template <int MR>
inline void pack_a(const MatView& a, int64_t m0, int64_t mlen, int64_t k0, int64_t kl, float* dst) {
  switch (a.t) {
    case DType::f32:
      return pack_a_t<MR>(static_cast<const float*>(a.p), a.rs, a.cs, m0, mlen, k0, kl, dst);
    case DType::bf16:
      return pack_a_t<MR>(static_cast<const bf16*>(a.p), a.rs, a.cs, m0, mlen, k0, kl, dst);
    case DType::f16:
      return pack_a_t<MR>(static_cast<const f16*>(a.p), a.rs, a.cs, m0, mlen, k0, kl, dst);
    default:
      return;
  }
}

using gemm::ceil_div;

#include "kernels/gemm/blocked_driver_impl.h"

// ---- split-K for small M -----------------------------------------------------------
// When M is one row panel and N has too few NR panels to keep the threads busy
// on the weight stream (npan < 4 per thread), the tasks are (panel, K-block)
// pairs. K-blocks are the usual kc blocks (a fixed chunking that does not
// depend on the thread count); each task writes its block's partial sum (the
// microkernel's accumulators, exactly as the unsplit path computes them), and a
// second pass adds them per panel in K order: c = ((p0 + p1) + p2) + ... which
// is the unsplit path's c = p0; c += p1; c += p2 ... operation by operation.
// So the result is bit-identical to the unsplit path and to any thread count.
inline bool use_split_k(int64_t npan, int64_t nkb, int64_t threads) {
  return threads > 1 && nkb >= 2 && npan < 4 * threads;
}
// The decode path's row groups: rows split into ceil(rows / MR) groups of
// near-equal size, f(first row, rows of the group, group index, groups) for
// each.
template <int MR, class F>
__attribute__((always_inline)) inline void for_row_groups(int rows, F&& f) {
  const int g = (rows + MR - 1) / MR, base = rows / g, extra = rows % g;
  for (int i = 0, r0 = 0; i < g; ++i) {
    const int rn = base + (i < extra ? 1 : 0);
    f(r0, rn, i, g);
    r0 += rn;
  }
}

// What a decode kernel call prefetches (ukr's pf, pf_bytes) for row group
// gi of g on the K-block of kl rows at `blk` (rows of row_bytes; packed
// panels are contiguous, so past a panel's last block lies the next panel's
// first). One group: decode_pf_rows ahead, a row per step. Several: the
// first group's pass streams the block from memory and the others read it
// from L1, so a prefetch ahead of the loads leaves memory idle during those
// passes (at M = 8 on AVX2, two groups of 4 rows, the packed time was about
// the FMA time plus the read time). Instead each group prefetches 1/g of the
// next block, spread over its pass: the stream runs at one rate throughout,
// a block ahead.
inline void decode_prefetch(const char* blk, int64_t kl, int64_t row_bytes, int64_t ahead_rows,
                            int gi, int g, const char** pf, int* pf_bytes) {
  if (g == 1) {
    *pf = blk + ahead_rows * row_bytes;
    *pf_bytes = static_cast<int>(row_bytes);
    return;
  }
  const int64_t share = (kl * row_bytes + g - 1) / g;  // bytes of the next block per group
  *pf = blk + kl * row_bytes + gi * share;
  *pf_bytes = static_cast<int>((share + kl - 1) / kl);
}
// part(pnl, k0, kl, dst): dst[rows x nr] (ld nr) = the block's accumulators.
template <class PartFn>
void run_split_k(const Scratch& sc, int rows, int64_t N, int64_t K, int64_t kc, int nr,
                 const Epilogue& ep, int64_t Nfull, const OutView& out, PartFn&& part) {
  const int64_t npan = ceil_div(N, nr), nkb = ceil_div(K, kc), tile = rows * nr;
  float* buf = sc.split(static_cast<size_t>(npan * nkb * tile));
  parallel_tasks(
      npan * nkb,
      [&](int64_t t) {
        const int64_t k0 = (t % nkb) * kc;
        part(t / nkb, k0, std::min(kc, K - k0), buf + t * tile);
      },
      sc.threads);
  parallel_tasks(
      npan,
      [&](int64_t pnl) {
        const StreamFence fence{out.stream};
        float* c = buf + pnl * nkb * tile;
        for (int64_t kb = 1; kb < nkb; ++kb) {
          const float* q = buf + (pnl * nkb + kb) * tile;
          for (int64_t e = 0; e + kLanes <= tile; e += kLanes)
            store(c + e, load(c + e) + load(q + e));
          for (int64_t e = tile / kLanes * kLanes; e < tile; ++e) c[e] = c[e] + q[e];
        }
        const int64_t jp = pnl * nr;
        finish_tile(ep, c, nr, rows, static_cast<int>(std::min<int64_t>(nr, N - jp)), 0, jp, nr,
                    Nfull, out);
      },
      sc.threads);
}

// A 16-bit B micro-panel (kl x NR) widened to f32 in `dst`, row by row in
// load_b_row's order: exact, so the f32 kernel on it gives the same bits as
// converting in the kernel's loads.
template <int NV, class TB>
void widen_b_panel(const TB* bp, int64_t kl, float* dst) {
  constexpr int NR = NV * kLanes;
  for (int64_t k = 0; k < kl; ++k) {
    Vf bv[NV];
    load_b_row(bp + k * NR, bv);
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) store(dst + k * NR + v * kLanes, bv[v]);
  }
}

// Share q of n of the 64-byte lines of [p, p + bytes) into L2.
inline void prefetch_lines_share(const void* p, int64_t bytes, int64_t q, int64_t n) {
  const char* c = static_cast<const char*>(p);
  const int64_t lines = ceil_div(bytes, 64);
  for (int64_t l = q * lines / n; l < (q + 1) * lines / n; ++l)
    __builtin_prefetch(c + l * 64, 0, 2);
}

// The blocked driver's microkernel policy for f32 A panels (pack_a) times
// B panels of TB (K*NR elements each): ukr_p per row count. A 16-bit panel
// is widened to f32 once per K-block (stage_b) and every row panel runs the
// f32 kernel on it: converting in the kernel's loads costs two shuffles per
// k for each of the mlen/MR uses. On AVX-512 (Intel: port 5, one of the two
// FMA ports) bf16 went 0.89-0.94x -> 0.98-1.01x f32 on 2048^3 and
// 2048x768x768. On AVX2 an Intel CPU measured no difference; an AMD Zen 3
// (2 threads, two builds alternated, three rounds, min ms) bf16 2048x768x768
// 17.7-21.5 -> 14.5-17.9, 32x4096x4096 7.9-9.4 -> 6.8-8.7, 8x11008x4096
// 5.3-8.4 -> 5.1-6.3 (docs/gemm.md).
template <int Mr, int Nv, class TB>
struct PackedUkr {
  static constexpr int MR = Mr, NR = Nv * kLanes;
  static constexpr double kMacsPerCycle = 32.0;
  static constexpr bool kWiden = !std::is_same_v<TB, float>;
  using KB = std::conditional_t<kWiden, float, TB>;
  static constexpr auto table = ukr_p_table<Nv, KB>(std::make_integer_sequence<int, Mr>());
  const TB* pb;
  int64_t K;

  static size_t stage_floats(int64_t kc) { return kWiden ? static_cast<size_t>(kc * NR) : 0; }
  const KB* stage_b(int64_t pnl, int64_t k0, int64_t kl, float* stage) const {
    const TB* bp = b_panel(pnl, k0);
    if constexpr (kWiden) {
      widen_b_panel<Nv>(bp, kl, stage);
      return stage;
    } else {
      return bp;
    }
  }

  static size_t a_floats(int64_t rows, int64_t kc) { return static_cast<size_t>(rows * kc); }
  static void pack_a_block(const MatView& a, int64_t m0, int64_t mlen, int64_t k0, int64_t kl,
                           float* abuf) {
    pack_a<MR>(a, m0, mlen, k0, kl, abuf);
  }
  const TB* b_panel(int64_t pnl, int64_t k0) const { return pb + pnl * K * NR + k0 * NR; }
  static int64_t b_panel_bytes(int64_t kl) { return kl * NR * static_cast<int64_t>(sizeof(TB)); }
  void prefetch_share(int64_t pnl, int64_t k0, int64_t kl, int64_t q, int64_t n) const {
    prefetch_lines_share(b_panel(pnl, k0), b_panel_bytes(kl), q, n);
  }
  // A bf16 output with nothing to apply (fused_bf16): the kernel rounds and
  // stores it on the last K-block, no pass over the f32 tile after it (bf16
  // 2048^3 at AVX2 0.94 -> 1.01 of f32).
  const OutView* out = nullptr;
  bool fused_bf16 = false;

  bool kernel(int rows, int64_t kl, const float* abuf, int64_t ir, const KB* bp, float* c,
              int64_t ldc, int ncols, bool accumulate, bool last, int64_t i0, int64_t jp) const {
    bf16* ob = last && fused_bf16 ? static_cast<bf16*>(out->p) + i0 * out->ld + jp : nullptr;
    table[rows - 1](kl, abuf + ir * kl, bp, c, ldc, ncols, accumulate, ob, ob ? out->ld : 0,
                    ob && out->stream);
    return ob != nullptr;
  }
};

// ---- B staged from the caller's layout ---------------------------------------
// The op form above the decode range (B a plain tensor, not packed at create):
// each kl x NR micro-panel is staged, in f32, from B as the caller holds it,
// once per K-block for all the row panels of the task, instead of packing all
// of B per call (which read B, wrote a packed copy as large and read that
// again: at 64x4096x4096 the call took 1.4-1.6x the pre-packed one). The
// staged panel holds the values pack_b would have packed, exactly (16-bit
// weights widened), so the f32 kernel on it gives the packed path's bits.

// Rows [k0, k0 + kl) x columns [j0, j0 + ncols) of B (row stride rs, column
// stride cs, one of them 1) into dst (kl x NR, row k at dst + k * NR),
// columns [ncols, NR) zero.
template <int NR, class T>
void stage_raw_b(const T* b, int64_t rs, int64_t cs, int64_t k0, int64_t kl, int64_t j0, int ncols,
                 float* dst) {
  if (cs == 1) {  // row-major K x N (matmul's b): row segments, converted in the loads
    // The segments are a row (a page or more) apart, which the hardware
    // prefetchers do not follow: each is prefetched into L1 kStageAhead rows
    // ahead. Zen 3, staged / pre-packed time, median: f32 64x1024x1024 (B in
    // L3, 1 thread) 0.59-0.60 -> 0.84-0.87; 64x4096x4096 (2 threads)
    // 0.55-0.65 -> 0.77-0.88, bf16 0.85-0.89 -> 0.89-0.94. 8 rows ahead
    // gained less, 32 the same as 16; the next panel's share prefetched into
    // L2 by the microkernel calls (prefetch_share) made no difference either
    // way.
    constexpr int64_t kStageAhead = 16, kLineElems = 64 / static_cast<int64_t>(sizeof(T));
    for (int64_t k = 0; k < kl; ++k) {
      const T* s = b + (k0 + k) * rs + j0;
      if (k + kStageAhead < kl) {
        const T* ahead = s + kStageAhead * rs;
        for (int l = 0; l < NR; l += kLineElems) __builtin_prefetch(ahead + l, 0, 3);
        __builtin_prefetch(ahead + NR - 1, 0, 3);
      }
      float* o = dst + k * NR;
      int j = 0;
      for (; j + kLanes <= ncols; j += kLanes) store(o + j, load(s + j));
      if (j < ncols) {
        store(o + j, load_n(s + j, ncols - j));
        j += kLanes;
      }
      for (; j < NR; j += kLanes) store(o + j, zero());
    }
    return;
  }
  // Transposed N x K (a linear weight, rs == 1): column j of B is a
  // contiguous source row; kLanes x kLanes tiles transposed in registers.
  int j = 0;
  for (; j + kLanes <= ncols; j += kLanes) {
    const T* s = b + (j0 + j) * cs + k0;
    int64_t k = 0;
    for (; k + kLanes <= kl; k += kLanes) {
      Vf t[kLanes];
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) t[i] = load(s + i * cs + k);
      transpose_lanes(t);
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) store(dst + (k + i) * NR + j, t[i]);
    }
    for (; k < kl; ++k)
      for (int i = 0; i < kLanes; ++i) dst[k * NR + j + i] = to_f32(s[i * cs + k]);
  }
  for (; j < NR; ++j) {
    const T* s = b + (j0 + j) * cs + k0;
    for (int64_t k = 0; k < kl; ++k) dst[k * NR + j] = j < ncols ? to_f32(s[k]) : 0.0f;
  }
}

// Each micro-panel is staged when its turn comes (kc x NR floats, in L1 for
// the row panels that use it); the calls on the panel before it bring its
// rows of B into L2, a share each (a row-major B is kl rows of 64-96 bytes
// a page or more apart: hundreds of streams, which the hardware prefetchers
// do not follow). Staging whole groups of panels (a row's bytes for 8 panels
// read at once, 128 KiB staged in L2) measured no faster on a Zen 3.
template <int Mr, int Nv, class T>
struct RawBUkr : PackedUkr<Mr, Nv, float> {
  static constexpr int NR = Nv * kLanes;
  const T* b;
  int64_t rs, cs, N;
  static size_t stage_floats(int64_t kc) { return static_cast<size_t>(kc * NR); }
  const float* stage_b(int64_t pnl, int64_t k0, int64_t kl, float* stage) const {
    const int64_t j0 = pnl * NR;
    stage_raw_b<NR>(b, rs, cs, k0, kl, j0, static_cast<int>(std::min<int64_t>(NR, N - j0)), stage);
    return stage;
  }
  void prefetch_share(int64_t pnl, int64_t k0, int64_t kl, int64_t q, int64_t n) const {
    const int64_t j0 = pnl * NR;
    if (j0 >= N) return;
    constexpr int64_t kLineElems = 64 / static_cast<int64_t>(sizeof(T));
    if (cs == 1) {  // kl rows of NR elements
      for (int64_t k = q * kl / n; k < (q + 1) * kl / n; ++k)
#pragma GCC unroll 4
        for (int l = 0; l < NR; l += kLineElems)
          __builtin_prefetch(b + (k0 + k) * rs + j0 + l, 0, 2);
    } else {  // up to NR source rows of kl elements
      const int64_t cols = std::min<int64_t>(NR, N - j0), per_row = ceil_div(kl, kLineElems);
      for (int64_t u = q * cols * per_row / n; u < (q + 1) * cols * per_row / n; ++u)
        __builtin_prefetch(b + (j0 + u / per_row) * cs + k0 + (u % per_row) * kLineElems, 0, 2);
    }
  }
};

template <int MR, int NV, class T>
void run_raw_tt(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a, const T* b,
                int64_t rs, int64_t cs, const OutView& out, const Epilogue& ep,
                const gemm::Workspace& ws) {
  if (M <= 0 || N <= 0) return;
  const Scratch sc(ws, p, M, N, K, out, false);
  const int64_t kc = even_kc(p.kc, K, 1);
  const bool direct_c = out.t == DType::f32 && !c_stride_aliases(out.ld);
  const bool fused_bf16 = out.t == DType::bf16 && ep.trivial();
  using U = RawBUkr<MR, NV, T>;
  run_blocked(U{{nullptr, K, &out, fused_bf16}, b, rs, cs, N}, p, sc, M, N, N, K, kc, a, out, ep,
              direct_c);
}

template <int MR, int NV>
void run_raw(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a, const MatView& b,
             const OutView& out, const Epilogue& ep, const gemm::Workspace& ws) {
  switch (b.t) {
    case DType::bf16:
      return run_raw_tt<MR, NV>(p, M, N, K, a, static_cast<const bf16*>(b.p), b.rs, b.cs, out, ep,
                                ws);
    case DType::f16:
      return run_raw_tt<MR, NV>(p, M, N, K, a, static_cast<const f16*>(b.p), b.rs, b.cs, out, ep,
                                ws);
    default:
      return run_raw_tt<MR, NV>(p, M, N, K, a, static_cast<const float*>(b.p), b.rs, b.cs, out, ep,
                                ws);
  }
}

// Decode with one row of A: kDecodeStreams panels walked side by side, each
// a sequential stream of the weights. One core of an AMD Zen 3 reads 19-21
// GB/s from one stream and 27-30 from four (no software prefetch; with it
// 23-25); oneDNN's M = 1 read 24-27 GB/s on one thread where ours read
// 19-21 from one panel at a time. Zen 4 at AVX-512 the same: with one
// stream per core the packed f32 M = 1 read 40 GB/s where a plain read of
// the weights read 56 (2 threads); with four it reads 55-58, the plain
// read's rate. Each panel's sums are those of ukr<1, NV> (ukr_eb at
// AVX-512: the same FMAs, one rounding each, in the same order): the same
// bits.
inline constexpr int kDecodeStreams = kLanes >= 8 ? 4 : 1;
template <int P, int NV, class TB>
void ukr_streams(int64_t kc, const float* a, const TB* b, int64_t panel_stride, float* c,
                 bool accumulate) {
  constexpr int NR = NV * kLanes;
  Vf acc[P][NV];
#pragma GCC unroll 8
  for (int q = 0; q < P; ++q)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[q][v] = zero();
  for (int64_t k = 0; k < kc; ++k) {
    const Vf av = set1(a[k]);
#pragma GCC unroll 8
    for (int q = 0; q < P; ++q) {
      Vf bv[NV];
      load_b_row(b + q * panel_stride + k * NR, bv);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[q][v] = fma(av, bv[v], acc[q][v]);
    }
  }
#pragma GCC unroll 8
  for (int q = 0; q < P; ++q)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      float* o = c + q * NR + v * kLanes;
      store(o, accumulate ? load(o) + acc[q][v] : acc[q][v]);
    }
}

template <int MR, int NV, class TB>
void run_tt(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a, const TB* pb,
            const OutView& out, const Epilogue& ep, const gemm::Workspace& ws) {
  using U = PackedUkr<MR, NV, TB>;
  constexpr int NR = U::NR;
  static constexpr auto table = ukr_table<NV, TB>(std::make_integer_sequence<int, MR>());
  constexpr int64_t kRowBytes = NR * static_cast<int64_t>(sizeof(TB));
  constexpr int64_t kPfRows = decode_pf_rows<NV, TB>();
  if (M <= 0 || N <= 0) return;
  const Scratch sc(ws, p, M, N, K, out, ep.gated);
  // Gated: the grid runs over the packed (gate/value-paired) columns.
  const int64_t Nfull = N;
  if (ep.gated) N = packed_panels(Nfull, NR, true) * NR;
  const int64_t kc = even_kc(p.kc, K, 1);
  // Decode: A read in place (no packing) when it is a few row groups of f32
  // with unit column stride; bf16 / f16 rows are converted once, whole, into
  // the caller's scratch (at most 16 rows: a small fraction of the weight
  // bytes streamed).
  const bool direct_a = M <= gemm::direct_max_m(MR) && a.cs == 1;
  const float* ap = static_cast<const float*>(a.p);
  int64_t lda = a.rs;
  if (direct_a && a.t != DType::f32 && K > 0) {
    float* buf = sc.pairs(static_cast<size_t>(M * K));
    const size_t bytes = dtype_size(a.t);
    for (int64_t i = 0; i < M; ++i) {
      const void* row = static_cast<const char*>(a.p) + i * a.rs * static_cast<int64_t>(bytes);
      if (a.t == DType::bf16)
        convert_bf16_to_f32(static_cast<const bf16*>(row), buf + i * K, static_cast<size_t>(K));
      else
        convert_f16_to_f32(static_cast<const f16*>(row), buf + i * K, static_cast<size_t>(K));
    }
    ap = buf;
    lda = K;
  }
  if (direct_a && K > 0 && use_split_k(ceil_div(N, NR), ceil_div(K, kc), sc.threads)) {
    const int rows = static_cast<int>(M);
    return run_split_k(sc, rows, N, K, kc, NR, ep, Nfull, out,
                       [&](int64_t pnl, int64_t k0, int64_t kl, float* dst) {
                         const TB* blk = pb + pnl * K * NR + k0 * NR;
                         for_row_groups<MR>(rows, [&](int r0, int rn, int gi, int g) {
                           const char* pf;
                           int pfb;
                           decode_prefetch(reinterpret_cast<const char*>(blk), kl, kRowBytes,
                                           kPfRows, gi, g, &pf, &pfb);
                           table[rn - 1](kl, ap + r0 * lda + k0, lda, 1, blk, NR, dst + r0 * NR, NR,
                                         NR, false, pf, pfb);
                         });
                       });
  }
  const bool direct_c = out.t == DType::f32 && !ep.gated && (direct_a || !c_stride_aliases(out.ld));
  if (!direct_a) {
    const bool fused_bf16 = out.t == DType::bf16 && !ep.gated && ep.trivial();
    return run_blocked(U{pb, K, &out, fused_bf16}, p, sc, M, N, Nfull, K, kc, a, out, ep, direct_c);
  }
  // Decode: each B panel is streamed once from start to end (all K), the
  // rows of C stay in L1 between the K-blocks, every row group runs on a
  // K-block while it is in L1. Same K-blocks, same rounding as the packed path.
  const Grid grid = make_grid(M, N, ceil_div(M, MR) * MR, std::max<int64_t>(p.nc / NR, 1) * NR, MR,
                              NR, sc.threads, /*small_m=*/true);  // one M-block: B streamed once
  run_tasks(sc, grid, NR, M, N, K, Nfull, direct_c, out, ep,
            [&](int64_t m0, int64_t mlen, int64_t n0, int64_t nlen, float* c, int64_t ldc) {
              const int rows = static_cast<int>(mlen);
              int64_t jp = n0;
              if constexpr (kDecodeStreams > 1) {
                constexpr int64_t kSpan = kDecodeStreams * NR;
                for (; rows == 1 && jp + kSpan <= n0 + nlen && jp + kSpan <= N; jp += kSpan) {
                  const TB* bp = pb + (jp / NR) * K * NR;
                  float* ct = c + (jp - n0);
                  for (int64_t k0 = 0; k0 < K; k0 += kc)
                    ukr_streams<kDecodeStreams, NV>(std::min(kc, K - k0), ap + m0 * lda + k0,
                                                    bp + k0 * NR, K * NR, ct, k0 > 0);
                  for (int q = 0; q < kDecodeStreams; ++q)
                    finish_tile(ep, ct + q * NR, ldc, 1, NR, m0, jp + q * NR, NR, Nfull, out);
                }
              }
              for (; jp < n0 + nlen; jp += NR) {
                const int ncols = static_cast<int>(std::min<int64_t>(NR, N - jp));
                const TB* bp = pb + (jp / NR) * K * NR;
                float* ct = c + (jp - n0);
                for (int64_t k0 = 0; k0 < K; k0 += kc)
                  for_row_groups<MR>(rows, [&](int r0, int rn, int gi, int g) {
                    const int64_t kl = std::min(kc, K - k0);
                    const char* pf;
                    int pfb;
                    decode_prefetch(reinterpret_cast<const char*>(bp + k0 * NR), kl, kRowBytes,
                                    kPfRows, gi, g, &pf, &pfb);
                    table[rn - 1](kl, ap + (m0 + r0) * lda + k0, lda, 1, bp + k0 * NR, NR,
                                  ct + r0 * ldc, ldc, ncols, k0 > 0, pf, pfb);
                  });
                finish_tile(ep, ct, ldc, rows, ncols, m0, jp, NR, Nfull, out);
              }
            });
}

template <int MR, int NV>
void run_t(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a, const void* pb,
           DType pt, const OutView& out, const Epilogue& ep, const gemm::Workspace& ws) {
  switch (pt) {
    case DType::bf16:
      return run_tt<MR, NV>(p, M, N, K, a, static_cast<const bf16*>(pb), out, ep, ws);
    case DType::f16:
      return run_tt<MR, NV>(p, M, N, K, a, static_cast<const f16*>(pb), out, ep, ws);
    default:
      return run_tt<MR, NV>(p, M, N, K, a, static_cast<const float*>(pb), out, ep, ws);
  }
}

#define OPSNN_GEMM_RUN(MR, NV) &run_t<MR, NV>,
#define OPSNN_GEMM_RUN_RAW(MR, NV) &run_raw<MR, NV>,
#define OPSNN_GEMM_MR(MR, NV) MR,
#define OPSNN_GEMM_NR(MR, NV) NV *kLanes,

using RunFn = void (*)(const Params&, int64_t, int64_t, int64_t, const MatView&, const void*, DType,
                       const OutView&, const Epilogue&, const gemm::Workspace&);
inline constexpr RunFn kRuns[] = {KERNEL_LIST(OPSNN_GEMM_RUN)};
using RunRawFn = void (*)(const Params&, int64_t, int64_t, int64_t, const MatView&, const MatView&,
                          const OutView&, const Epilogue&, const gemm::Workspace&);
inline constexpr RunRawFn kRunsRaw[] = {KERNEL_LIST(OPSNN_GEMM_RUN_RAW)};
inline constexpr int kMr[] = {KERNEL_LIST(OPSNN_GEMM_MR)};
inline constexpr int kNr[] = {KERNEL_LIST(OPSNN_GEMM_NR)};

inline void run(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a, const void* pb,
                DType pt, const OutView& c, const Epilogue& ep, const gemm::Workspace& ws) {
  kRuns[p.kernel](p, M, N, K, a, pb, pt, c, ep, ws);
}
inline void run_raw_entry(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a,
                          const MatView& b, const OutView& c, const Epilogue& ep,
                          const gemm::Workspace& ws) {
  kRunsRaw[p.kernel](p, M, N, K, a, b, c, ep, ws);
}
inline void pack_b_entry(const Params& p, int64_t K, int64_t N, const MatView& b, void* dst,
                         DType pt, bool gated) {
  pack_b(kNr[p.kernel], K, N, b, dst, pt, gated);
}

}  // namespace detail

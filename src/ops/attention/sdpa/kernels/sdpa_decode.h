// The few-rows form (decode: lanes along D, K/V read in place with a
// look-ahead). Part of sdpa_impl.h.

#pragma once

#include "ops/attention/sdpa/kernels/sdpa_common.h"

namespace sdpa_impl {

// ---- few rows: lanes along D -------------------------------------------------
// A task with at most kFewRows rows (decode: Lq x the G query heads of one KV
// head) is memory-bound on K/V, and lanes over rows would waste most of each
// vector. Here the lanes run along D instead: each K row is read once, in
// place (f32, bf16 or f16, contiguous, strided or paged, no pack), and dotted
// with every row of Q (score = horizontal sum); the scores of a block lie as
// S[row][key], so the masks, the bias and the exp are vectors along the keys;
// P V broadcasts P and accumulates O[row][d] along D.
inline constexpr int64_t kFewRows = kLanes == 8 ? 8 : 16;
// Keys per block (a multiple of kLanes). kFewBlock (the largest block) sizes
// the scratch. 32: with the look-ahead below, 32-key blocks streamed the KV
// cache closer to a plain read than 64 (docs/notes/attention-runs.md round 6).
inline constexpr int64_t kFewBlock = 128;
inline constexpr int64_t kFewKeys = 32;
inline constexpr int kPvRows = kLanes == 8 ? 2 : 4;
inline constexpr int kPvVecs = 4;

// Look-ahead. The task reads its K/V as one stream of passes: K of block 0
// (scores), V of block 0 (P V), K of block 1, V of block 1, ... Where a pass
// loads a part of a key's row (one vector of K in the scores, the dims of a
// P V call), the same part of the same key's row in the next pass is
// prefetched into L1 and in the pass after that into L2. The requests are
// spread evenly over both passes and interleaved with the multiply-adds, so
// the memory keeps streaming while either pass computes (docs/attention.md
// round 6: 0.78 -> 0.87-0.89 of a plain read of the same bytes, 2 threads).
template <class T>
struct Ahead {
  const T* const* l1 = nullptr;  // rows of the next pass
  const T* const* l2 = nullptr;  // rows of the pass after
  int64_t n1 = 0, n2 = 0;        // keys in each

  // Key j's rows from element e0 on, Bytes bytes (a constant: this sits in
  // the inner loops). Rows need not be line aligned: a partly covered
  // last line is the next part's or the next row's first.
  // always_inline: out of line, GCC 12 judges a function that only reads
  // memory and prefetches pure, and deletes its calls (docs/contributing.md).
  template <int64_t Bytes>
  [[gnu::always_inline]] void part(int64_t j, int64_t e0) const {
    constexpr int kLines = static_cast<int>((Bytes + 63) / 64);
    if (j < n1)
      for (int i = 0; i < kLines; ++i)
        __builtin_prefetch(reinterpret_cast<const char*>(l1[j] + e0) + 64 * i, 0, 3);
    if (j < n2)
      for (int i = 0; i < kLines; ++i)
        __builtin_prefetch(reinterpret_cast<const char*>(l2[j] + e0) + 64 * i, 0, 2);
  }
};

// bf16 rows are converted with shifts: one load of 2 x kLanes bf16 gives the
// even elements (<< 16) and the odd ones (& 0xffff0000) as two f32 vectors.
// Q and O keep the same order ("split" layout: per block of 2 x kLanes dims,
// the even dims then the odd dims), which a dot product does not notice; the
// dims past the last whole block stay in natural order.
template <class T>
inline constexpr bool kSplitBf16 = std::is_same_v<T, bf16>;

inline void load_split(const bf16* p, Vf& even, Vf& odd) {
  Vf raw;
  std::memcpy(&raw, p, sizeof raw);
  const Vi x = bits(raw);
  even = from_bits(shl<16>(x));
  odd = from_bits(x & set1i(static_cast<int32_t>(0xffff0000u)));
}

// Position of dim d in the split layout (identity past the whole blocks).
inline int64_t split_pos(int64_t d, int64_t dt) {
  if (d >= dt) return d;
  const int64_t c = d / (2 * kLanes), w = d % (2 * kLanes);
  return c * 2 * kLanes + (w & 1) * kLanes + w / 2;
}

// S[r][j] = sum_d Q[r][d] K[j][d] for NR rows (Q rows padded with zeros to
// nv * kLanes, stride ldq). nb2: whole split blocks (bf16 only).
// ah, j: the look-ahead of key j, one part per vector of K read (finely
// interleaved with the multiply-adds: a burst of prefetches per row streamed
// worse, docs/notes/attention-runs.md round 6).
template <int NR, class T>
inline void few_scores(const T* kr, const float* q, int64_t ldq, int64_t nb2, int64_t nfull,
                       int tail, float* s, int64_t lds, const Ahead<T>& ah, int64_t j) {
  constexpr int64_t kVecBytes = kLanes * static_cast<int64_t>(sizeof(T));
  Vf acc[NR];
  for (int r = 0; r < NR; ++r) acc[r] = zero();
  if constexpr (kSplitBf16<T>) {
    for (int64_t c = 0; c < nb2; ++c) {
      ah.template part<2 * kVecBytes>(j, c * 2 * kLanes);
      Vf ke, ko;
      load_split(kr + c * 2 * kLanes, ke, ko);
      const float* qc = q + c * 2 * kLanes;
      for (int r = 0; r < NR; ++r) {
        acc[r] = fma(ke, load(qc + r * ldq), acc[r]);
        acc[r] = fma(ko, load(qc + r * ldq + kLanes), acc[r]);
      }
    }
    kr += nb2 * 2 * kLanes;
    q += nb2 * 2 * kLanes;
  }
  const int64_t e0 = nb2 * 2 * kLanes;  // element offset of kr
  int64_t v = 0;
  for (; v < nfull; ++v) {
    ah.template part<kVecBytes>(j, e0 + v * kLanes);
    const Vf k = load(kr + v * kLanes);
    for (int r = 0; r < NR; ++r) acc[r] = fma(k, load(q + r * ldq + v * kLanes), acc[r]);
  }
  if (tail) {
    ah.template part<kVecBytes>(j, e0 + v * kLanes);
    const Vf k = load_n(kr + v * kLanes, tail);
    for (int r = 0; r < NR; ++r) acc[r] = fma(k, load(q + r * ldq + v * kLanes), acc[r]);
  }
  for (int r = 0; r < NR; ++r) s[r * lds] = reduce_add(acc[r]);
}

#ifdef SDPA_HSUM16
// AVX-512: 16 dot products at once (NR rows x 16/NR keys), their 16
// accumulators summed by a shuffle tree (45 instructions instead of 16
// horizontal reductions).
inline __m512 hsum16(const Vf* a) {
  __m512 t[8], u[4], w[2];
  for (int i = 0; i < 8; ++i) {
    const __m512 x = a[2 * i].v, y = a[2 * i + 1].v;
    t[i] = _mm512_add_ps(_mm512_shuffle_f32x4(x, y, 0x44), _mm512_shuffle_f32x4(x, y, 0xEE));
  }
  for (int i = 0; i < 4; ++i)
    u[i] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], 0x88),
                         _mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], 0xDD));
  for (int i = 0; i < 2; ++i)
    w[i] = _mm512_add_ps(_mm512_shuffle_ps(u[2 * i], u[2 * i + 1], 0x44),
                         _mm512_shuffle_ps(u[2 * i], u[2 * i + 1], 0xEE));
  // Lane 4c + e holds the sum of a[4e + c].
  return _mm512_add_ps(_mm512_shuffle_ps(w[0], w[1], 0x88), _mm512_shuffle_ps(w[0], w[1], 0xDD));
}

// The 16 sums of hsum16 as NR rows of 16 / NR scores (row stride lds).
template <int NR>
inline void store_sums16(__m512 z, float* s, int64_t lds) {
  if constexpr (NR == 1) {
    _mm512_storeu_ps(s, z);
  } else if constexpr (NR == 2) {
    _mm256_storeu_ps(s, _mm512_castps512_ps256(z));
    _mm256_storeu_ps(s + lds, _mm512_extractf32x8_ps(z, 1));
  } else {
    _mm_storeu_ps(s, _mm512_castps512_ps128(z));
    _mm_storeu_ps(s + lds, _mm512_extractf32x4_ps(z, 1));
    _mm_storeu_ps(s + 2 * lds, _mm512_extractf32x4_ps(z, 2));
    _mm_storeu_ps(s + 3 * lds, _mm512_extractf32x4_ps(z, 3));
  }
}

template <int NR, class T>
inline void few_scores16(const T* const* kr, const float* q, int64_t ldq, int64_t nb2,
                         int64_t nfull, int tail, float* s, int64_t lds, const Ahead<T>& ah,
                         int64_t j) {
  constexpr int NK = 16 / NR;
  constexpr int64_t kVecBytes = kLanes * static_cast<int64_t>(sizeof(T));
  Vf acc[NR][NK];
  for (int r = 0; r < NR; ++r)
    for (int k = 0; k < NK; ++k) acc[r][k] = zero();
  int64_t e = 0;  // element offset
  if constexpr (kSplitBf16<T>) {
    for (int64_t c = 0; c < nb2; ++c, e += 32) {
      for (int k = 0; k < NK; ++k) ah.template part<2 * kVecBytes>(j + k, e);
      Vf ke[NK], ko[NK];
      for (int k = 0; k < NK; ++k) load_split(kr[k] + e, ke[k], ko[k]);
      for (int r = 0; r < NR; ++r) {
        const Vf qe = load(q + r * ldq + e), qo = load(q + r * ldq + e + 16);
        for (int k = 0; k < NK; ++k) acc[r][k] = fma(ko[k], qo, fma(ke[k], qe, acc[r][k]));
      }
    }
  }
  for (int64_t v = 0; v < nfull; ++v, e += 16) {
    for (int k = 0; k < NK; ++k) ah.template part<kVecBytes>(j + k, e);
    Vf kv[NK];
    for (int k = 0; k < NK; ++k) kv[k] = load(kr[k] + e);
    for (int r = 0; r < NR; ++r) {
      const Vf qv = load(q + r * ldq + e);
      for (int k = 0; k < NK; ++k) acc[r][k] = fma(kv[k], qv, acc[r][k]);
    }
  }
  if (tail) {
    for (int k = 0; k < NK; ++k) ah.template part<kVecBytes>(j + k, e);
    Vf kv[NK];
    for (int k = 0; k < NK; ++k) kv[k] = load_n(kr[k] + e, tail);
    for (int r = 0; r < NR; ++r) {
      const Vf qv = load(q + r * ldq + e);
      for (int k = 0; k < NK; ++k) acc[r][k] = fma(kv[k], qv, acc[r][k]);
    }
  }
  Vf in[16];
  for (int n = 0; n < 16; ++n) in[4 * (n % 4) + n / 4] = acc[n / NK][n % NK];
  const __m512 z = hsum16(in);
  store_sums16<NR>(z, s, lds);
}
#endif

// Scores of rows [r, r + NR) against the block's keys, with the look-ahead.
template <int NR, class T>
inline void few_scores_rows(const T* const* kr, const float* q, int64_t ldq, int64_t nb2,
                            int64_t nfull, int tail, float* s, int64_t lds, int64_t nk,
                            const Ahead<T>& ah) {
  int64_t j = 0;
#ifdef SDPA_HSUM16
  constexpr int NK = 16 / NR;
  for (; j + NK <= nk; j += NK)
    few_scores16<NR>(kr + j, q, ldq, nb2, nfull, tail, s + j, lds, ah, j);
#endif
  for (; j < nk; ++j) few_scores<NR>(kr[j], q, ldq, nb2, nfull, tail, s + j, lds, ah, j);
}

#ifdef SDPA_BF16DOT
// AVX512_BF16: scores straight from the bf16 rows with vdpbf16ps (pairs of
// dims in natural order; Q kept as raw bf16, zero padded to 32 dims, and the
// scale applied to the sums): half the multiply-adds of the f32 form and no
// conversion of K. NR rows x NK keys (NR * NK == 16: shuffle-tree sums).
template <int NR, int NK>
inline void few_scores_dp(const bf16* const* kr, const uint16_t* q16, int64_t ldq16, int64_t nblk,
                          int tail32, float scale, float* s, int64_t lds, const Ahead<bf16>& ah,
                          int64_t j) {
  __m512 acc[NR][NK];
  for (int r = 0; r < NR; ++r)
    for (int k = 0; k < NK; ++k) acc[r][k] = _mm512_setzero_ps();
  const __mmask32 tm = tail32 ? static_cast<__mmask32>((1u << tail32) - 1u) : ~__mmask32{0};
  for (int64_t c = 0; c < nblk; ++c) {
    for (int k = 0; k < NK; ++k) ah.template part<64>(j + k, c * 32);
    __m512i kv[NK];
    for (int k = 0; k < NK; ++k)
      kv[k] = c + 1 == nblk ? _mm512_maskz_loadu_epi16(tm, kr[k] + c * 32)
                            : _mm512_loadu_si512(kr[k] + c * 32);
    for (int r = 0; r < NR; ++r) {
      const __m512bh qv = bf16dot::as_bh(_mm512_loadu_si512(q16 + r * ldq16 + c * 32));
      for (int k = 0; k < NK; ++k)
        acc[r][k] = _mm512_dpbf16_ps(acc[r][k], bf16dot::as_bh(kv[k]), qv);
    }
  }
  if constexpr (NR * NK == 16) {
    Vf in[16];
    for (int n = 0; n < 16; ++n) in[4 * (n % 4) + n / 4] = Vf{acc[n / NK][n % NK]};
    const __m512 z = _mm512_mul_ps(hsum16(in), _mm512_set1_ps(scale));
    store_sums16<NR>(z, s, lds);
  } else {
    for (int r = 0; r < NR; ++r)
      for (int k = 0; k < NK; ++k) s[r * lds + k] = _mm512_reduce_add_ps(acc[r][k]) * scale;
  }
}

template <int NR>
inline void few_scores_rows_dp(const bf16* const* kr, const uint16_t* q16, int64_t ldq16,
                               int64_t nblk, int tail32, float scale, float* s, int64_t lds,
                               int64_t nk, const Ahead<bf16>& ah) {
  constexpr int NK = 16 / NR;
  int64_t j = 0;
  for (; j + NK <= nk; j += NK)
    few_scores_dp<NR, NK>(kr + j, q16, ldq16, nblk, tail32, scale, s + j, lds, ah, j);
  for (; j < nk; ++j)
    few_scores_dp<NR, 1>(kr + j, q16, ldq16, nblk, tail32, scale, s + j, lds, ah, j);
}
#endif

#ifdef SDPA_BF16DOT
// AVX512_BF16 P V: vdpbf16ps over pairs of keys. For 32 dims of keys j and
// j + 1, two permutes give the even dims as (V[j][2i], V[j+1][2i]) pairs and
// the odd dims as (V[j][2i+1], V[j+1][2i+1]) -- the split layout of O -- and
// each row's (P[r][j], P[r][j+1]) bf16 pair is broadcast: half the
// multiply-adds of the f32 form and no bf16 -> f32 conversion of V.
struct PairIdx {
  __m512i even, odd;
  PairIdx() {
    alignas(64) uint16_t e[32], o[32];
    for (int i = 0; i < 16; ++i) {
      e[2 * i] = static_cast<uint16_t>(2 * i), e[2 * i + 1] = static_cast<uint16_t>(32 + 2 * i);
      o[2 * i] = static_cast<uint16_t>(2 * i + 1), o[2 * i + 1] = static_cast<uint16_t>(33 + 2 * i);
    }
    even = _mm512_load_si512(e);
    odd = _mm512_load_si512(o);
  }
};

// O[r][32 c0 ..] = alpha[r] O[r][..] + sum_j P[r][j] V[j][..] over NC whole
// split blocks from block c0; P as bf16 rows p16 (stride ldp16, even count of
// keys nk2 pairs; vr[2 * nk2 - 1] valid, a zero row when nk is odd).
template <int NR, int NC>
inline void few_pv_dp(const bf16* const* vr, int64_t nk2, const uint16_t* p16, int64_t ldp16,
                      float* o, int64_t ldo, const float* alpha, int64_t c0, const PairIdx& ix,
                      const Ahead<bf16>& ah) {
  __m512 acc[NR][2 * NC];
  for (int r = 0; r < NR; ++r) {
    const __m512 a = _mm512_set1_ps(alpha[r]);
    for (int c = 0; c < 2 * NC; ++c)
      acc[r][c] = _mm512_mul_ps(_mm512_loadu_ps(o + r * ldo + c0 * 32 + c * 16), a);
  }
  for (int64_t j2 = 0; j2 < nk2; ++j2) {
    ah.template part<64 * NC>(2 * j2, c0 * 32);
    ah.template part<64 * NC>(2 * j2 + 1, c0 * 32);
    const bf16* v0 = vr[2 * j2] + c0 * 32;
    const bf16* v1 = vr[2 * j2 + 1] + c0 * 32;
    __m512bh ve[NC], vo[NC];
    for (int c = 0; c < NC; ++c) {
      const __m512i x = _mm512_loadu_si512(v0 + c * 32), y = _mm512_loadu_si512(v1 + c * 32);
      ve[c] = bf16dot::as_bh(_mm512_permutex2var_epi16(x, ix.even, y));
      vo[c] = bf16dot::as_bh(_mm512_permutex2var_epi16(x, ix.odd, y));
    }
    for (int r = 0; r < NR; ++r) {
      const __m512bh pb = bf16dot::as_bh(bf16dot::pair_bcast(p16 + r * ldp16 + 2 * j2));
      for (int c = 0; c < NC; ++c) {
        acc[r][2 * c] = _mm512_dpbf16_ps(acc[r][2 * c], ve[c], pb);
        acc[r][2 * c + 1] = _mm512_dpbf16_ps(acc[r][2 * c + 1], vo[c], pb);
      }
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int c = 0; c < 2 * NC; ++c) _mm512_storeu_ps(o + r * ldo + c0 * 32 + c * 16, acc[r][c]);
}

template <int NR>
inline void few_pv_rows_dp(const bf16* const* vr, int64_t nk2, const uint16_t* p16, int64_t ldp16,
                           float* o, int64_t ldo, const float* alpha, int64_t nb2,
                           const PairIdx& ix, const Ahead<bf16>& ah) {
  int64_t c = 0;
  for (; c + 2 <= nb2; c += 2) few_pv_dp<NR, 2>(vr, nk2, p16, ldp16, o, ldo, alpha, c, ix, ah);
  if (c < nb2) few_pv_dp<NR, 1>(vr, nk2, p16, ldp16, o, ldo, alpha, c, ix, ah);
}
#endif

// O[r][c*kLanes..] = alpha[r] O[r][..] + sum_j P[r][j] V[j][..] for NR rows
// and NC vectors starting at vector c0; TAIL: the last vector holds `tail` dims.
// ah: the look-ahead of the same dims.
template <int NR, int NC, bool TAIL, class T>
inline void few_pv(const T* const* vr, int64_t nk, const float* pr, int64_t ldp, float* o,
                   int64_t ldo, const float* alpha, int64_t c0, int tail, const Ahead<T>& ah) {
  Vf acc[NR][NC];
  for (int r = 0; r < NR; ++r) {
    const Vf a = set1(alpha[r]);
    for (int c = 0; c < NC; ++c) acc[r][c] = load(o + r * ldo + (c0 + c) * kLanes) * a;
  }
  for (int64_t j = 0; j < nk; ++j) {
    ah.template part<NC * kLanes* static_cast<int64_t>(sizeof(T))>(j, c0 * kLanes);
    Vf v[NC];
    for (int c = 0; c < NC; ++c)
      v[c] = TAIL && c == NC - 1 ? load_n(vr[j] + (c0 + c) * kLanes, tail)
                                 : load(vr[j] + (c0 + c) * kLanes);
    for (int r = 0; r < NR; ++r) {
      const Vf pb = set1(pr[r * ldp + j]);
      for (int c = 0; c < NC; ++c) acc[r][c] = fma(pb, v[c], acc[r][c]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int c = 0; c < NC; ++c) store(o + r * ldo + (c0 + c) * kLanes, acc[r][c]);
}

// As few_pv over NC whole split blocks of bf16 V starting at block c0.
template <int NR, int NC>
inline void few_pv_split(const bf16* const* vr, int64_t nk, const float* pr, int64_t ldp, float* o,
                         int64_t ldo, const float* alpha, int64_t c0, const Ahead<bf16>& ah) {
  Vf acc[NR][2 * NC];
  for (int r = 0; r < NR; ++r) {
    const Vf a = set1(alpha[r]);
    for (int c = 0; c < 2 * NC; ++c)
      acc[r][c] = load(o + r * ldo + c0 * 2 * kLanes + c * kLanes) * a;
  }
  for (int64_t j = 0; j < nk; ++j) {
    ah.template part<NC * 2 * kLanes * 2>(j, c0 * 2 * kLanes);
    Vf v[2 * NC];
    for (int c = 0; c < NC; ++c) load_split(vr[j] + (c0 + c) * 2 * kLanes, v[2 * c], v[2 * c + 1]);
    for (int r = 0; r < NR; ++r) {
      const Vf pb = set1(pr[r * ldp + j]);
      for (int c = 0; c < 2 * NC; ++c) acc[r][c] = fma(pb, v[c], acc[r][c]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int c = 0; c < 2 * NC; ++c) store(o + r * ldo + c0 * 2 * kLanes + c * kLanes, acc[r][c]);
}

// dp_blocks: the first nb2 split blocks are done already (by few_pv_rows_dp).
template <int NR, class T>
inline void few_pv_rows(const T* const* vr, int64_t nk, const float* pr, int64_t ldp, float* o,
                        int64_t ldo, const float* alpha, int64_t nb2, int64_t nfull, int tail,
                        bool dp_blocks, const Ahead<T>& ah) {
  int64_t c = 0;
  if constexpr (kSplitBf16<T>) {
    if (dp_blocks) c = nb2;
    for (; c + kPvVecs / 2 <= nb2; c += kPvVecs / 2)
      few_pv_split<NR, kPvVecs / 2>(vr, nk, pr, ldp, o, ldo, alpha, c, ah);
    for (; c < nb2; ++c) few_pv_split<NR, 1>(vr, nk, pr, ldp, o, ldo, alpha, c, ah);
    c *= 2;  // in vectors
    nfull += c;
  }
  for (; c + kPvVecs <= nfull; c += kPvVecs)
    few_pv<NR, kPvVecs, false>(vr, nk, pr, ldp, o, ldo, alpha, c, 0, ah);
  for (; c < nfull; ++c) few_pv<NR, 1, false>(vr, nk, pr, ldp, o, ldo, alpha, c, 0, ah);
  if (tail) few_pv<NR, 1, true>(vr, nk, pr, ldp, o, ldo, alpha, c, tail, ah);
}

// Adds bias row values b[(j0 + j) * sj], j < nk, to s[j].
template <class T>
inline void add_bias_row(float* s, const T* b, int64_t sj, int64_t nk) {
  if (sj == 1) {
    int64_t j = 0;
    for (; j + kLanes <= nk; j += kLanes) store(s + j, load(s + j) + load(b + j));
    if (j < nk) {
      const int n = static_cast<int>(nk - j);
      store_n(s + j, load_n(s + j, n) + load_n(b + j, n), n);
    }
  } else if (sj == 0) {
    const float xs = to_f32(b[0]);
    const Vf xb = set1(xs);
    int64_t j = 0;
    for (; j + kLanes <= nk; j += kLanes) store(s + j, load(s + j) + xb);
    for (; j < nk; ++j) s[j] += xs;
  } else {
    for (int64_t j = 0; j < nk; ++j) s[j] += to_f32(b[j * sj]);
  }
}
inline void add_bias(float* s, const opsnn::sdpa::Broadcast4& bias, int64_t off, int64_t nk) {
  switch (bias.dtype) {
    case DType::bf16:
      return add_bias_row(s, static_cast<const bf16*>(bias.data) + off, bias.sj, nk);
    case DType::f16:
      return add_bias_row(s, static_cast<const f16*>(bias.data) + off, bias.sj, nk);
    default:
      return add_bias_row(s, static_cast<const float*>(bias.data) + off, bias.sj, nk);
  }
}

// Sets s[j] = -inf where mask row m[j * sj] is false; eight contiguous mask
// bytes that are all true (the common case) cost one compare.
inline void apply_mask_row(float* s, const bool* m, int64_t sj, int64_t nk) {
  if (sj == 0) {
    if (!m[0])
      for (int64_t j = 0; j < nk; ++j) s[j] = kNegInf;
    return;
  }
  int64_t j = 0;
  if (sj == 1)
    for (; j + 8 <= nk; j += 8) {
      uint64_t w;
      std::memcpy(&w, m + j, 8);
      if (w == 0x0101010101010101ull) continue;
      for (int x = 0; x < 8; ++x) s[j + x] = m[j + x] ? s[j + x] : kNegInf;
    }
  for (; j < nk; ++j)
    if (!m[j * sj]) s[j] = kNegInf;
}

// rows[j] = the row of key j0 + j (j < n): a constant stride unless paged.
template <class T>
inline void row_ptrs(const opsnn::sdpa::KvSource& src, const T* base, int64_t b, int64_t h,
                     int64_t j0, int64_t n, const T** rows) {
  if (n <= 0) return;
  if (!src.block_table) {
    const T* r0 = base + src.offset(b, h, j0);
    for (int64_t j = 0; j < n; ++j) rows[j] = r0 + j * src.sl;
    return;
  }
  for (int64_t j = 0; j < n; ++j) rows[j] = base + src.offset(b, h, j0 + j);
}

// dst = scale * src in the split layout (bf16: nb2 whole blocks) then natural order.
template <class T>
inline void load_q_row(const T* src, float* dst, int64_t D, int64_t nb2, float scale) {
  const Vf sc = set1(scale);
  int64_t d = 0;
  if constexpr (kSplitBf16<T>) {
    for (int64_t c = 0; c < nb2; ++c, d += 2 * kLanes) {
      Vf e, o;
      load_split(src + d, e, o);
      store(dst + d, e * sc);
      store(dst + d + kLanes, o * sc);
    }
  }
  for (; d + kLanes <= D; d += kLanes) store(dst + d, load(src + d) * sc);
  if (d < D) {
    const int n = static_cast<int>(D - d);
    store_n(dst + d, load_n(src + d, n) * sc, n);
  }
}

template <class T>
inline void few_rows_task(const Params& p, const RowPlan& rp, int64_t t, const Task& tk,
                          float* slot, float* partials) {
  const int64_t D = p.D;
  const int64_t nb2 = kSplitBf16<T> ? D / (2 * kLanes) : 0, dt = nb2 * 2 * kLanes;
  const int64_t nfull = (D - dt) / kLanes;
  const int tail = static_cast<int>((D - dt) % kLanes);
  const int64_t ld = round_up(D, kLanes);  // row stride of Q and O
#ifdef SDPA_BF16DOT
  const int64_t ld16 = round_up(D, 32);  // raw bf16 Q rows (fit in the f32 rows' space)
#endif
  constexpr int64_t fb = kFewKeys;
  const int64_t rows = tk.ng * tk.ni, lds = fb;
  float* q = slot;                                               // [rows][ld], scaled, zero padded
  float* o = q + kFewRows * ld;                                  // [rows][ld]
  float* s = o + kFewRows * ld;                                  // [rows][kFewBlock]
  float* m = s + kFewRows * lds;                                 // [rows]
  float* l = m + kFewRows;                                       // [rows]
  float* alpha = l + kFewRows;                                   // [rows]
  int64_t* ipos = reinterpret_cast<int64_t*>(alpha + kFewRows);  // query position per row
  int64_t* boff = ipos + kFewRows;
  int64_t* moff = boff + kFewRows;
  const T** kr = reinterpret_cast<const T**>(moff + kFewRows);  // [kFewBlock]
  const T** vr = kr + kFewBlock;
  const T** kn = vr + kFewBlock;  // K and V rows of the next block
  const T** vn = kn + kFewBlock;
#ifdef SDPA_BF16DOT
  // P rounded to bf16 [rows][kFewBlock] and a zero V row (pairs a last odd key).
  uint16_t* p16 = reinterpret_cast<uint16_t*>(vn + kFewBlock);
  const bf16* zrow = reinterpret_cast<const bf16*>(p16 + kFewRows * kFewBlock);
  if constexpr (kSplitBf16<T>)
    std::memset(p16 + kFewRows * kFewBlock, 0, static_cast<size_t>(round_up(D, 32)) * 2);
  const PairIdx pix;
  constexpr bool kDpPv = kSplitBf16<T>;
#else
  constexpr bool kDpPv = false;
#endif

  const int64_t lk_b = valid_keys(p, tk.b);
  const int64_t off = lk_b - p.Lq;
  const int64_t chunk = split_chunk(p);
  const int64_t kbeg = tk.split * chunk;
  int64_t kend = std::min(kbeg + chunk, lk_b);
  if (p.causal) kend = std::min(kend, tk.i0 + tk.ni - 1 + off + 1);

  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = tk.hkv * rp.G + tk.g0 + r / tk.ni, i = tk.i0 + r % tk.ni;
    const int64_t qo = tk.b * p.qsb + h * p.qsh + i * p.qsl;
#ifdef SDPA_BF16DOT
    if constexpr (kSplitBf16<T>) {  // raw bf16 for vdpbf16ps, zero padded to 32
      uint16_t* q16 = reinterpret_cast<uint16_t*>(q) + r * ld16;
      const bf16* src = static_cast<const bf16*>(p.q) + qo;
      for (int64_t d = 0; d < D; ++d) q16[d] = src[d].bits;
      for (int64_t d = D; d < ld16; ++d) q16[d] = 0;
    } else
#endif
    {
      load_q_row(static_cast<const T*>(p.q) + qo, q + r * ld, D, nb2, p.scale);
      for (int64_t d = D; d < ld; ++d) q[r * ld + d] = 0;
    }
    for (int64_t d = 0; d < ld; ++d) o[r * ld + d] = 0;
    m[r] = kNegInf;
    l[r] = 0;
    ipos[r] = i;
    boff[r] = tk.b * p.bias.sb + h * p.bias.sh + i * p.bias.si;
    moff[r] = tk.b * p.mask.sb + h * p.mask.sh + i * p.mask.si;
  }

  const T* kbase = static_cast<const T*>(p.k.data);
  const T* vbase = static_cast<const T*>(p.v.data);
  const Vf neg_inf = set1(kNegInf), neg_max = set1(-3.4028235e38f);
  alignas(64) float iota[kLanes];
  for (int x = 0; x < kLanes; ++x) iota[x] = static_cast<float>(x);
  const Vf viota = load(iota);
  for (int64_t j0 = kbeg; j0 < kend; j0 += fb) {
    const int64_t nk = std::min(fb, kend - j0), nkv = round_up(nk, kLanes);
    // Bool mask first: a block no row sees is skipped before its scores.
    if (p.mask.data) {
      bool any = false;
      const bool* mk = static_cast<const bool*>(p.mask.data);
      for (int64_t r = 0; r < rows && !any; ++r)
        any = mask_any(mk + moff[r] + j0 * p.mask.sj, p.mask.sj, nk);
      if (!any) continue;
    }
    row_ptrs(p.k, kbase, tk.b, tk.hkv, j0, nk, kr);
    row_ptrs(p.v, vbase, tk.b, tk.hkv, j0, nk, vr);
    // The look-ahead (see Ahead): the score pass fetches this block's V rows
    // into L1 and the next block's K rows into L2; the P V pass the next
    // block's K rows into L1 and its V rows into L2. The first row group of
    // each pass issues them.
    const int64_t n2 = std::max<int64_t>(0, std::min(fb, kend - (j0 + fb)));
    row_ptrs(p.k, kbase, tk.b, tk.hkv, j0 + fb, n2, kn);
    row_ptrs(p.v, vbase, tk.b, tk.hkv, j0 + fb, n2, vn);
    Ahead<T> ah{vr, kn, nk, n2};
    const Ahead<T> none;
#ifdef SDPA_BF16DOT
    if constexpr (kSplitBf16<T>) {
      const uint16_t* q16 = reinterpret_cast<const uint16_t*>(q);
      const int64_t nblk = ld16 / 32;
      const int tail32 = static_cast<int>(D % 32);
      int64_t r = 0;
      for (; r + 4 <= rows; r += 4, ah = none)
        few_scores_rows_dp<4>(kr, q16 + r * ld16, ld16, nblk, tail32, p.scale, s + r * lds, lds, nk,
                              ah);
      if (r + 2 <= rows) {
        few_scores_rows_dp<2>(kr, q16 + r * ld16, ld16, nblk, tail32, p.scale, s + r * lds, lds, nk,
                              ah);
        r += 2;
        ah = none;
      }
      if (r < rows)
        few_scores_rows_dp<1>(kr, q16 + r * ld16, ld16, nblk, tail32, p.scale, s + r * lds, lds, nk,
                              ah);
    } else
#endif
    {
      int64_t r = 0;
      for (; r + 4 <= rows; r += 4, ah = none)
        few_scores_rows<4>(kr, q + r * ld, ld, nb2, nfull, tail, s + r * lds, lds, nk, ah);
      if (r + 2 <= rows) {
        few_scores_rows<2>(kr, q + r * ld, ld, nb2, nfull, tail, s + r * lds, lds, nk, ah);
        r += 2;
        ah = none;
      }
      if (r < rows)
        few_scores_rows<1>(kr, q + r * ld, ld, nb2, nfull, tail, s + r * lds, lds, nk, ah);
    }
    // The bias first, then the masks: a masked key is -inf whatever its bias.
    if (p.bias.data)
      for (int64_t rr = 0; rr < rows; ++rr)
        add_bias(s + rr * lds, p.bias, boff[rr] + j0 * p.bias.sj, nk);
    if (p.mask.data) {
      const bool* mk = static_cast<const bool*>(p.mask.data);
      for (int64_t rr = 0; rr < rows; ++rr)
        apply_mask_row(s + rr * lds, mk + moff[rr] + j0 * p.mask.sj, p.mask.sj, nk);
    }
    for (int64_t rr = 0; rr < rows; ++rr) {
      float* sr = s + rr * lds;
      for (int64_t j = nk; j < nkv; ++j) sr[j] = kNegInf;
      if (p.causal && j0 + nk - 1 > ipos[rr] + off) {
        const Vf lim = set1(static_cast<float>(ipos[rr] + off - j0));
        for (int64_t j = 0; j < nkv; j += kLanes)
          store(sr + j, select(lim < viota + set1(static_cast<float>(j)), neg_inf, load(sr + j)));
      }
      Vf mb = neg_inf;
      for (int64_t j = 0; j < nkv; j += kLanes) mb = max(mb, load(sr + j));
      const float mo = m[rr], mn = std::max(mo, reduce_max(mb));
      const float ms = mn < -3.4028235e38f ? 0.0f : mn;
      alpha[rr] = mo < -3.4028235e38f ? 0.0f : std::exp(mo - ms);
      m[rr] = mn;
      const Vf vms = set1(ms);
      Vf sum = zero();
#ifdef SDPA_BF16DOT
      if constexpr (kDpPv) {
        // P also rounded to bf16 for the vdpbf16ps P V (as in the many-rows
        // form); the sum, the lse and the dims past the whole blocks use f32 P.
        uint16_t* pr16 = p16 + rr * lds;
        for (int64_t j = 0; j < nkv; j += kLanes) {
          const Vf x = load(sr + j);
          const Vf pr = select(x < neg_max, zero(), vexp_nonpos(x - vms));
          const __m256bh h = _mm512_cvtneps_pbh(pr.v);
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(pr16 + j),
                              reinterpret_cast<const __m256i&>(h));
          store(sr + j, pr);
          sum = sum + pr;
        }
      } else
#endif
      {
        for (int64_t j = 0; j < nkv; j += kLanes) {
          const Vf x = load(sr + j);
          const Vf pr = select(x < neg_max, zero(), vexp_nonpos(x - vms));
          store(sr + j, pr);
          sum = sum + pr;
        }
      }
      l[rr] = l[rr] * alpha[rr] + reduce_add(sum);
    }
    const Ahead<T> pv_ah{kn, vn, n2, n2};
#ifdef SDPA_BF16DOT
    if constexpr (kDpPv) {
      if (nk & 1) vr[nk] = zrow;
      const int64_t nk2 = (nk + 1) / 2;
      int64_t r = 0;
      for (; r + kPvRows <= rows; r += kPvRows)
        few_pv_rows_dp<kPvRows>(vr, nk2, p16 + r * lds, lds, o + r * ld, ld, alpha + r, nb2, pix,
                                r == 0 ? pv_ah : none);
      for (; r < rows; ++r)
        few_pv_rows_dp<1>(vr, nk2, p16 + r * lds, lds, o + r * ld, ld, alpha + r, nb2, pix,
                          r == 0 ? pv_ah : none);
    }
#endif
    int64_t r = 0;
    for (; r + kPvRows <= rows; r += kPvRows)
      few_pv_rows<kPvRows>(vr, nk, s + r * lds, lds, o + r * ld, ld, alpha + r, nb2, nfull, tail,
                           kDpPv, r == 0 ? pv_ah : none);
    for (; r < rows; ++r)
      few_pv_rows<1>(vr, nk, s + r * lds, lds, o + r * ld, ld, alpha + r, nb2, nfull, tail, kDpPv,
                     r == 0 ? pv_ah : none);
  }

  if (p.kv_splits > 1) {
    const int64_t mq_max = round_up(p.q_block, opsnn::sdpa::kMaxLanes);
    float* pt = partials + t * mq_max * (D + 2);
    for (int64_t r = 0; r < rows; ++r) {
      float* pr = pt + r * (D + 2);
      pr[0] = m[r];
      pr[1] = l[r];
      std::memcpy(pr + 2, o + r * ld, static_cast<size_t>(D) * sizeof(float));  // O as laid out
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = tk.hkv * rp.G + tk.g0 + r / tk.ni, i = tk.i0 + r % tk.ni;
    const int64_t oo = tk.b * p.osb + h * p.osh + i * p.osl;
    if (l[r] == 0) {
      put_zeros(p.out, p.dtype, oo, D);
    } else {
      const float inv = 1.0f / l[r];  // NaN stays NaN
      for (int64_t dd = 0; dd < D; ++dd)
        put(p.out, p.dtype, oo + dd, o[r * ld + split_pos(dd, dt)] * inv);
    }
    if (p.lse) p.lse[(tk.b * p.Hq + h) * p.Lq + i] = lse_of(m[r], l[r]);
  }
}

inline void few_rows_task(const Params& p, const RowPlan& rp, int64_t t, const Task& tk,
                          float* slot, float* partials) {
  switch (p.dtype) {
    case DType::bf16:
      return few_rows_task<bf16>(p, rp, t, tk, slot, partials);
    case DType::f16:
      return few_rows_task<f16>(p, rp, t, tk, slot, partials);
    default:
      return few_rows_task<float>(p, rp, t, tk, slot, partials);
  }
}

}  // namespace sdpa_impl

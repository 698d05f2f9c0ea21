// bf16 attention with AVX512_BF16 dot products (vdpbf16ps): Q K^T straight
// from the bf16 inputs and P V with P rounded to bf16; softmax, running
// statistics and accumulation stay f32. Registered with cpu_ok =
// has_avx512_bf16, for bf16 inputs with an even head dim.
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/simd/vec_avx512.h"
#include "ops/attention/sdpa/sdpa.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
namespace bf16v {  // apart from the plain AVX-512 instantiation of sdpa_impl
namespace bf16dot {

using opsnn::sdpa::Params;

inline __m512bh as_bh(__m512i x) { return reinterpret_cast<__m512bh&>(x); }
inline __m512i pair_bcast(const uint16_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}
inline __mmask32 mask32(int n) {
  return n >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << n) - 1u);
}

// Index vectors interleaving two 32 x u16 sources a (0..31), b (32..63).
struct Idx {
  __m512i lo, hi, il;
  Idx() {
    alignas(64) uint16_t a[32], b[32], c[32];
    for (int i = 0; i < 16; ++i) {
      a[2 * i] = static_cast<uint16_t>(i), a[2 * i + 1] = static_cast<uint16_t>(32 + i);
      b[2 * i] = static_cast<uint16_t>(16 + i), b[2 * i + 1] = static_cast<uint16_t>(48 + i);
      c[2 * i] = static_cast<uint16_t>(i), c[2 * i + 1] = static_cast<uint16_t>(16 + i);
    }
    lo = _mm512_load_si512(a);
    hi = _mm512_load_si512(b);
    il = _mm512_load_si512(c);
  }
};

// V rows j0..j0+nk -> [nk/2][D][2] (pairs of consecutive keys; an odd last key pairs with 0).
inline void pack_v(const Params& p, int64_t b, int64_t h, int64_t j0, int64_t nk, uint16_t* vp16) {
  const Idx ix;
  const int64_t D = p.D;
  const uint16_t* base = static_cast<const uint16_t*>(p.v.data);
  for (int64_t j = 0; j < nk; j += 2) {
    const uint16_t* r0 = base + p.v.offset(b, h, j0 + j);
    const uint16_t* r1 = j + 1 < nk ? base + p.v.offset(b, h, j0 + j + 1) : nullptr;
    uint16_t* dst = vp16 + (j / 2) * D * 2;
    for (int64_t d = 0; d < D; d += 32) {
      const int n = static_cast<int>(std::min<int64_t>(32, D - d));
      const __m512i a = _mm512_maskz_loadu_epi16(mask32(n), r0 + d);
      const __m512i c = r1 ? _mm512_maskz_loadu_epi16(mask32(n), r1 + d) : _mm512_setzero_si512();
      const int n0 = std::min(n, 16), n1 = n - n0;
      _mm512_mask_storeu_epi16(dst + 2 * d, mask32(2 * n0), _mm512_permutex2var_epi16(a, ix.lo, c));
      if (n1 > 0)
        _mm512_mask_storeu_epi16(dst + 2 * d + 32, mask32(2 * n1),
                                 _mm512_permutex2var_epi16(a, ix.hi, c));
    }
  }
}

template <int RJ, int NV>
inline void score_tile(const uint16_t* const* kr, const uint16_t* qt16, int64_t mq, int64_t D2,
                       float* st, int64_t j, int64_t iv, __m512 sc) {
  __m512 acc[RJ][NV];
  for (int r = 0; r < RJ; ++r)
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t d2 = 0; d2 < D2; ++d2) {
    __m512i q[NV];
    for (int c = 0; c < NV; ++c) q[c] = _mm512_loadu_si512(qt16 + (d2 * mq + iv + 16 * c) * 2);
    for (int r = 0; r < RJ; ++r) {
      const __m512bh kb = as_bh(pair_bcast(kr[r] + 2 * d2));
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], kb, as_bh(q[c]));
    }
  }
  for (int r = 0; r < RJ; ++r)
    for (int c = 0; c < NV; ++c)
      _mm512_storeu_ps(st + (j + r) * mq + iv + 16 * c, _mm512_mul_ps(acc[r][c], sc));
}

template <int RJ>
inline void score_rows(const uint16_t* const* kr, const uint16_t* qt16, int64_t mq, int64_t D2,
                       float* st, int64_t j, __m512 sc) {
  int64_t iv = 0;
  for (; iv + 32 <= mq; iv += 32) score_tile<RJ, 2>(kr, qt16, mq, D2, st, j, iv, sc);
  if (iv < mq) score_tile<RJ, 1>(kr, qt16, mq, D2, st, j, iv, sc);
}

// S^T[j][r] = scale * K[j0+j] . Q[r], K read in place (bf16 pairs broadcast).
inline void scores(const Params& p, int64_t b, int64_t h, int64_t j0, int64_t nk,
                   const uint16_t* qt16, int64_t mq, float* st) {
  const __m512 sc = _mm512_set1_ps(p.scale);
  const uint16_t* base = static_cast<const uint16_t*>(p.k.data);
  const uint16_t* kr[8];
  int64_t j = 0;
  for (; j + 8 <= nk; j += 8) {
    for (int r = 0; r < 8; ++r) kr[r] = base + p.k.offset(b, h, j0 + j + r);
    score_rows<8>(kr, qt16, mq, p.D / 2, st, j, sc);
  }
  for (; j < nk; ++j) {
    kr[0] = base + p.k.offset(b, h, j0 + j);
    score_rows<1>(kr, qt16, mq, p.D / 2, st, j, sc);
  }
}

template <int RD, int NV>
inline void pv_tile(const uint16_t* pt16, int64_t mq, int64_t nk2, const uint16_t* vp16, int64_t D,
                    float* ot, const float* alpha, int64_t d, int64_t iv) {
  __m512 acc[RD][NV];
  for (int c = 0; c < NV; ++c) {
    const __m512 a = _mm512_loadu_ps(alpha + iv + 16 * c);
    for (int r = 0; r < RD; ++r)
      acc[r][c] = _mm512_mul_ps(_mm512_loadu_ps(ot + (d + r) * mq + iv + 16 * c), a);
  }
  for (int64_t j2 = 0; j2 < nk2; ++j2) {
    __m512i pv[NV];
    for (int c = 0; c < NV; ++c) pv[c] = _mm512_loadu_si512(pt16 + (j2 * mq + iv + 16 * c) * 2);
    const uint16_t* vr = vp16 + (j2 * D + d) * 2;
    for (int r = 0; r < RD; ++r) {
      const __m512bh vb = as_bh(pair_bcast(vr + 2 * r));
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], vb, as_bh(pv[c]));
    }
  }
  for (int r = 0; r < RD; ++r)
    for (int c = 0; c < NV; ++c) _mm512_storeu_ps(ot + (d + r) * mq + iv + 16 * c, acc[r][c]);
}

template <int RD>
inline void pv_rows(const uint16_t* pt16, int64_t mq, int64_t nk2, const uint16_t* vp16, int64_t D,
                    float* ot, const float* alpha, int64_t d) {
  int64_t iv = 0;
  for (; iv + 32 <= mq; iv += 32) pv_tile<RD, 2>(pt16, mq, nk2, vp16, D, ot, alpha, d, iv);
  if (iv < mq) pv_tile<RD, 1>(pt16, mq, nk2, vp16, D, ot, alpha, d, iv);
}

// O^T = alpha O^T + V^T P^T with P (f32 in st) rounded to bf16 pairs of keys.
inline void accumulate(const float* st, int64_t mq, int64_t nk, const uint16_t* vp16, int64_t D,
                       float* ot, const float* alpha, uint16_t* pt16) {
  const Idx ix;
  const int64_t nk2 = (nk + 1) / 2;
  for (int64_t j2 = 0; j2 < nk2; ++j2) {
    const float* r0 = st + 2 * j2 * mq;
    const float* r1 = 2 * j2 + 1 < nk ? r0 + mq : nullptr;
    for (int64_t iv = 0; iv < mq; iv += 16) {
      const __m512 a = _mm512_loadu_ps(r0 + iv);
      const __m512 c = r1 ? _mm512_loadu_ps(r1 + iv) : _mm512_setzero_ps();
      const __m512bh pk = _mm512_cvtne2ps_pbh(c, a);  // [a0..a15, c0..c15]
      const __m512i x = _mm512_permutexvar_epi16(ix.il, reinterpret_cast<const __m512i&>(pk));
      _mm512_storeu_si512(pt16 + (j2 * mq + iv) * 2, x);
    }
  }
  int64_t d = 0;
  for (; d + 8 <= D; d += 8) pv_rows<8>(pt16, mq, nk2, vp16, D, ot, alpha, d);
  for (; d < D; ++d) pv_rows<1>(pt16, mq, nk2, vp16, D, ot, alpha, d);
}

}  // namespace bf16dot

#define SDPA_BF16DOT 1
#define SDPA_HSUM16 1
#include "ops/attention/sdpa/kernels/sdpa_impl.h"
#undef SDPA_HSUM16
#undef SDPA_BF16DOT

}  // namespace bf16v
}  // namespace opsnn::simd::avx512

namespace opsnn::sdpa {
RunFn run_avx512bf16() { return &simd::avx512::bf16v::sdpa_impl::run; }
}  // namespace opsnn::sdpa

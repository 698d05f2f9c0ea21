// 16 x f32 lanes on AVX-512 (F/BW/VL/DQ). Include only from *_avx512.cc files.
// The same names exist in vec_avx2.h and vec_scalar.h, so kernels written
// once (the *_impl.h files) compile for every ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "core/isa_namespace.h"
#include "opsnn/dtype.h"

namespace opsnn::simd::avx512 {
// A file compiled with more flags than avx512 (bf16, VNNI, AMX) gets its own
// copies of these: see core/isa_namespace.h.
inline namespace OPSNN_ISA_NAMESPACE {

inline constexpr int kLanes = 16;
inline constexpr const char* kIsaName = "avx512";

struct Vf {
  __m512 v;
};
struct Vi {
  __m512i v;
};
struct Mask {
  __mmask16 m;
};

inline Vf zero() { return {_mm512_setzero_ps()}; }
inline Vf set1(float x) { return {_mm512_set1_ps(x)}; }
inline Vi set1i(int32_t x) { return {_mm512_set1_epi32(x)}; }
inline __mmask16 tail_mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }

inline Vf load(const float* p) { return {_mm512_loadu_ps(p)}; }
// base[idx[i]] for each lane (idx: kLanes int32 offsets in elements).
inline Vf gather(const float* base, const int32_t* idx) {
  return {_mm512_i32gather_ps(_mm512_loadu_si512(idx), base, 4)};
}
inline void store(float* p, Vf a) { _mm512_storeu_ps(p, a.v); }
// Non-temporal store for large outputs that will not be read soon; p 64-byte aligned.
inline void stream(float* p, Vf a) { _mm512_stream_ps(p, a.v); }
// Orders earlier stream() stores before later stores (call once after a run of them).
inline void stream_fence() { _mm_sfence(); }

// p * 2^k for the exp kernels of vmath_body.inc, given k and t = k +
// kPow2Shifter from exp_split (vscalefps: one rounding, denormals and 0 below).
inline constexpr float kPow2Shifter = 12582912.0f;
inline constexpr float kPow2RawScale = 1.0f;  // see vec_avx2.h
inline Vf scale_pow2_shifted(Vf p, Vf, Vf k) { return {_mm512_scalef_ps(p.v, k.v)}; }
inline Vf scale_pow2_shifted_raw(Vf p, Vf t, Vf k) { return scale_pow2_shifted(p, t, k); }

inline Vf load_n(const float* p, int n) { return {_mm512_maskz_loadu_ps(tail_mask(n), p)}; }
inline void store_n(float* p, Vf a, int n) { _mm512_mask_storeu_ps(p, tail_mask(n), a.v); }

inline Vf cvt_bf16(__m256i h) {
  return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))};
}
// The bf16 bits of each lane (round to nearest even, NaN kept quiet) in the
// low half of its 32 bits.
inline __m512i bf16_bits32(Vf a) {
  __m512i u = _mm512_castps_si512(a.v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  __mmask16 nan = _mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q);
  r = _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));
  return _mm512_srli_epi32(r, 16);
}
inline __m256i to_bf16(Vf a) { return _mm512_cvtepi32_epi16(bf16_bits32(a)); }
inline Vf load(const bf16* p) {
  return cvt_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// bf16 GEMM panels in unpack order, as on AVX2 (see vec_avx2.h and
// swizzle_bf16_rows): one 64-byte load and vpunpck{l,h}wd against zero give
// columns 0-15 and 16-31, one shuffle-port op per vector instead of
// cvt_bf16's widen (p5) + shift (p0), both FMA ports on Intel.
inline constexpr bool kBf16PanelPairs = true;
inline void load_bf16_pair(const bf16* p, Vf& lo, Vf& hi) {
  const __m512i x = _mm512_loadu_si512(p);
  const __m512i z = _mm512_setzero_si512();
  lo.v = _mm512_castsi512_ps(_mm512_unpacklo_epi16(z, x));
  hi.v = _mm512_castsi512_ps(_mm512_unpackhi_epi16(z, x));
}
// load_bf16_pair on bf16 in column order gives lo = columns 0-3, 8-11,
// 16-19, 24-27 and hi = the quads between; this puts a pair of vectors in
// that order back in column order: 0-15 (lo), 16-31 (hi).
inline void unswizzle_pair(Vf& lo, Vf& hi) {
  const __m512i i0 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i i1 =
      _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  const __m512 a = lo.v, b = hi.v;
  lo.v = _mm512_permutex2var_ps(a, i0, b);
  hi.v = _mm512_permutex2var_ps(a, i1, b);
}
inline Vf load_n(const bf16* p, int n) {
  return cvt_bf16(_mm256_maskz_loadu_epi16(tail_mask(n), p));
}
inline void store(bf16* p, Vf a) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), to_bf16(a)); }
// As on AVX2 (vec_avx2.h): a pair of vectors in vpunpck order for lane-wise
// work, packed back into element order by one vpackusdw (within each 128-bit
// lane) where two store() take a vpmovdw (two ops on Intel) each.
inline void load_lanewise_pair(const bf16* p, Vf& a, Vf& b) { load_bf16_pair(p, a, b); }
inline void store_lanewise_pair(bf16* p, Vf a, Vf b) {
  _mm512_storeu_si512(p, _mm512_packus_epi32(bf16_bits32(a), bf16_bits32(b)));
}
inline void store_n(bf16* p, Vf a, int n) { _mm256_mask_storeu_epi16(p, tail_mask(n), to_bf16(a)); }
// p 32-byte aligned.
inline void stream(bf16* p, Vf a) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), to_bf16(a));
}

inline Vf load(const f16* p) {
  return {_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
}
inline Vf load_n(const f16* p, int n) {
  return {_mm512_cvtph_ps(_mm256_maskz_loadu_epi16(tail_mask(n), p))};
}
inline void store(f16* p, Vf a) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                      _mm512_cvtps_ph(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline void store_n(f16* p, Vf a, int n) {
  _mm256_mask_storeu_epi16(p, tail_mask(n),
                           _mm512_cvtps_ph(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
// p 32-byte aligned.
inline void stream(f16* p, Vf a) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p),
                      _mm512_cvtps_ph(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

inline Vf operator+(Vf a, Vf b) { return {_mm512_add_ps(a.v, b.v)}; }
inline Vf operator-(Vf a, Vf b) { return {_mm512_sub_ps(a.v, b.v)}; }
inline Vf operator*(Vf a, Vf b) { return {_mm512_mul_ps(a.v, b.v)}; }
inline Vf operator/(Vf a, Vf b) { return {_mm512_div_ps(a.v, b.v)}; }
inline Vf operator-(Vf a) { return {_mm512_xor_ps(a.v, _mm512_set1_ps(-0.0f))}; }
inline Vf fma(Vf a, Vf b, Vf c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }    // a*b+c
inline Vf fnma(Vf a, Vf b, Vf c) { return {_mm512_fnmadd_ps(a.v, b.v, c.v)}; }  // c-a*b
inline Vf min(Vf a, Vf b) { return {_mm512_min_ps(a.v, b.v)}; }
inline Vf max(Vf a, Vf b) { return {_mm512_max_ps(a.v, b.v)}; }
inline Vf abs(Vf a) { return {_mm512_abs_ps(a.v)}; }
inline Vf sqrt(Vf a) { return {_mm512_sqrt_ps(a.v)}; }
inline Vf floor(Vf a) {
  return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)};
}
inline Vf round(Vf a) {  // to nearest even
  return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
inline Vf copysign(Vf mag, Vf sign) {
  const __m512 s = _mm512_set1_ps(-0.0f);
  return {_mm512_or_ps(_mm512_andnot_ps(s, mag.v), _mm512_and_ps(s, sign.v))};
}

inline Mask operator<(Vf a, Vf b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)}; }
inline Mask operator<=(Vf a, Vf b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LE_OQ)}; }
inline Mask operator>(Vf a, Vf b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)}; }
inline Mask operator>=(Vf a, Vf b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GE_OQ)}; }
inline Mask operator==(Vf a, Vf b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ)}; }
inline Mask isnan(Vf a) { return {_mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q)}; }
inline Mask operator&(Mask a, Mask b) { return {static_cast<__mmask16>(a.m & b.m)}; }
inline Mask operator|(Mask a, Mask b) { return {static_cast<__mmask16>(a.m | b.m)}; }
inline bool any(Mask a) { return a.m != 0; }
inline Vf select(Mask m, Vf if_true, Vf if_false) {
  return {_mm512_mask_blend_ps(m.m, if_false.v, if_true.v)};
}
// Lane i: tab[bits(idx)[i] & 7] for indices below 8 (vpermps uses the low 4
// bits; the table is repeated in both halves): an 8-entry table lookup.
inline Vf permute8(const float* tab, Vf idx) {
  return {_mm512_permutexvar_ps(_mm512_castps_si512(idx.v),
                                _mm512_broadcast_f32x8(_mm256_loadu_ps(tab)))};
}
// a and b interleaved: lo = a0 b0 ... a7 b7, hi the same of elements 8..15.
inline void zip2(Vf a, Vf b, Vf& lo, Vf& hi) {
  const __m512i i0 = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i i1 =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  lo.v = _mm512_permutex2var_ps(a.v, i0, b.v);
  hi.v = _mm512_permutex2var_ps(a.v, i1, b.v);
}
// The inverse: of x = a0..a15 b0..b15, even = x0 x2 .. x30, odd = x1 x3 .. x31.
inline void unzip2(Vf a, Vf b, Vf& even, Vf& odd) {
  const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  even.v = _mm512_permutex2var_ps(a.v, ie, b.v);
  odd.v = _mm512_permutex2var_ps(a.v, io, b.v);
}

// Integer lanes, for exponent manipulation in the vector math.
inline Vi cvt_round(Vf a) { return {_mm512_cvtps_epi32(a.v)}; }  // nearest even
inline Vi cvt_trunc(Vf a) { return {_mm512_cvttps_epi32(a.v)}; }
inline Vf cvt_f32(Vi a) { return {_mm512_cvtepi32_ps(a.v)}; }
inline Vi bits(Vf a) { return {_mm512_castps_si512(a.v)}; }
inline Vf from_bits(Vi a) { return {_mm512_castsi512_ps(a.v)}; }
inline Vi operator+(Vi a, Vi b) { return {_mm512_add_epi32(a.v, b.v)}; }
inline Vi operator-(Vi a, Vi b) { return {_mm512_sub_epi32(a.v, b.v)}; }
inline Vi operator&(Vi a, Vi b) { return {_mm512_and_si512(a.v, b.v)}; }
inline Vi operator|(Vi a, Vi b) { return {_mm512_or_si512(a.v, b.v)}; }
template <int k>
inline Vi shl(Vi a) {
  return {_mm512_slli_epi32(a.v, k)};
}
template <int k>
inline Vi shr_arith(Vi a) {
  return {_mm512_srai_epi32(a.v, k)};
}
template <int k>
inline Vi shr_logic(Vi a) {
  return {_mm512_srli_epi32(a.v, k)};
}

inline float reduce_add(Vf a) { return _mm512_reduce_add_ps(a.v); }
inline float reduce_max(Vf a) { return _mm512_reduce_max_ps(a.v); }
inline float reduce_min(Vf a) { return _mm512_reduce_min_ps(a.v); }
inline float first(Vf a) { return _mm512_cvtss_f32(a.v); }

// In-register transpose of a kLanes x kLanes tile: lane c of x[r] -> lane r of x[c]
// (64 shuffles; used by sdpa's bias tiles and the GEMM's A packing).
// always_inline: out of line, GCC passes the tile through memory and puts a
// vzeroupper and spills around the call (4% of AVX2 SD cross-attention).
[[gnu::always_inline]] inline void transpose_lanes(Vf* x) {
  __m512 t[16], r[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(x[2 * i].v, x[2 * i + 1].v);
    t[2 * i + 1] = _mm512_unpackhi_ps(x[2 * i].v, x[2 * i + 1].v);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  // r[4i + k] holds, per 128-bit lane L, column 4L + k of rows 4i..4i+3.
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 4; ++k) {
      t[8 * h + k] = _mm512_shuffle_f32x4(r[8 * h + k], r[8 * h + 4 + k], 0x88);
      t[8 * h + 4 + k] = _mm512_shuffle_f32x4(r[8 * h + k], r[8 * h + 4 + k], 0xDD);
    }
  for (int k = 0; k < 8; ++k) {
    x[k].v = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
    x[8 + k].v = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xDD);
  }
}

#include "kernels/simd/lanewise_pair.inc"
#include "kernels/simd/stream_body.inc"
#include "kernels/simd/vmath_body.inc"

}  // namespace OPSNN_ISA_NAMESPACE
}  // namespace opsnn::simd::avx512

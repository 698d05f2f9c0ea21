// 8 x f32 lanes on AVX2 + FMA + F16C. Include only from *_avx2.cc files.
// Same names as vec_avx512.h / vec_scalar.h.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "core/isa_namespace.h"
#include "opsnn/dtype.h"

namespace opsnn::simd::avx2 {
// A file compiled with more flags than avx2 (bf16, VNNI, AMX) gets its own
// copies of these: see core/isa_namespace.h.
inline namespace OPSNN_ISA_NAMESPACE {

inline constexpr int kLanes = 8;
inline constexpr const char* kIsaName = "avx2";

struct Vf {
  __m256 v;
};
struct Vi {
  __m256i v;
};
struct Mask {
  __m256 m;  // all-ones lanes where true
};

inline Vf zero() { return {_mm256_setzero_ps()}; }
inline Vf set1(float x) { return {_mm256_set1_ps(x)}; }
inline Vi set1i(int32_t x) { return {_mm256_set1_epi32(x)}; }
inline __m256i tail_mask(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

inline Vf load(const float* p) { return {_mm256_loadu_ps(p)}; }
// base[idx[i]] for each lane (idx: kLanes int32 offsets in elements).
inline Vf gather(const float* base, const int32_t* idx) {
  return {_mm256_i32gather_ps(base, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx)), 4)};
}
inline void store(float* p, Vf a) { _mm256_storeu_ps(p, a.v); }
inline void stream(float* p, Vf a) { _mm256_stream_ps(p, a.v); }
// Orders earlier stream() stores before later stores (call once after a run of them).
inline void stream_fence() { _mm_sfence(); }
inline Vf load_n(const float* p, int n) { return {_mm256_maskload_ps(p, tail_mask(n))}; }
// A full vector is stored plainly: vmaskmovps to memory is microcoded on AMD
// Zen (about 12 cycles each on Zen 3), and epilogues pass n == kLanes for
// all but the last vector of a row.
inline void store_n(float* p, Vf a, int n) {
  if (n >= kLanes)
    _mm256_storeu_ps(p, a.v);
  else
    _mm256_maskstore_ps(p, tail_mask(n), a.v);
}

inline Vf cvt_bf16(__m128i h) {
  return {_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))};
}
// The bf16 bits of each lane (round to nearest even, NaN kept quiet) in the
// low half of its 32 bits.
inline __m256i bf16_bits32(Vf a) {
  __m256i u = _mm256_castps_si256(a.v);
  __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
  __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q));
  r = _mm256_blendv_epi8(r, _mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), nan);
  return _mm256_srli_epi32(r, 16);
}
inline __m128i to_bf16(Vf a) {
  const __m256i r = bf16_bits32(a);
  return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}
inline Vf load(const bf16* p) {
  return cvt_bf16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
// Packed GEMM weight panels of bf16 keep each 16 columns in unpack order
// (quads 1 and 2 swapped: columns 0-3, 8-11, 4-7, 12-15), so that one 32-byte
// load and vpunpck{l,h}wd against zero give columns 0-7 and 8-15 as f32 on
// the shuffle port. cvt_bf16's widen + shift puts the shift on the FMA ports
// (Intel p0/p1): 2 ops per 12 FMAs of the 6x16 kernel, bf16 at 0.85x f32.
inline constexpr bool kBf16PanelPairs = true;
inline void load_bf16_pair(const bf16* p, Vf& lo, Vf& hi) {
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  // A zero made here (a zero idiom: no execution port), not hoisted out of
  // the caller's loop: a zero register held across the 4x24 kernel's loop
  // made GCC keep an accumulator on the stack (bf16 at 0.44 of the FMA peak).
  __m256i z;
  asm volatile("vpxor %x0, %x0, %x0" : "=x"(z));
  lo.v = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, x));
  hi.v = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, x));
}
// load_bf16_pair on bf16 in column order (not a swizzled panel) gives
// columns 0-3, 8-11 (lo) and 4-7, 12-15 (hi); this puts a pair of vectors
// in that order back in column order: 0-7 (lo), 8-15 (hi).
inline void unswizzle_pair(Vf& lo, Vf& hi) {
  const __m256 a = lo.v, b = hi.v;
  lo.v = _mm256_permute2f128_ps(a, b, 0x20);
  hi.v = _mm256_permute2f128_ps(a, b, 0x31);
}
inline Vf load_n(const bf16* p, int n) {
  alignas(16) uint16_t buf[8] = {};
  std::memcpy(buf, p, sizeof(uint16_t) * n);
  return cvt_bf16(_mm_load_si128(reinterpret_cast<const __m128i*>(buf)));
}
inline void store(bf16* p, Vf a) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), to_bf16(a)); }
// 2 kLanes consecutive bf16 for work that treats every lane alike (the
// element-wise ops): load_lanewise_pair gives them in vpunpck order
// (load_bf16_pair: elements 0-3, 8-11 in a, 4-7, 12-15 in b), one load and
// two unpacks where two load() widen and shift; store_lanewise_pair writes
// such a pair back in element order with one vpackusdw (it packs within
// 128-bit lanes: 0-3 beside 4-7, 8-11 beside 12-15) where two store() take
// an extract and a pack each. Float and f16 pairs are two plain vectors.
inline void load_lanewise_pair(const bf16* p, Vf& a, Vf& b) { load_bf16_pair(p, a, b); }
inline void store_lanewise_pair(bf16* p, Vf a, Vf b) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                      _mm256_packus_epi32(bf16_bits32(a), bf16_bits32(b)));
}
// p 16-byte aligned.
inline void stream(bf16* p, Vf a) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), to_bf16(a)); }
inline void store_n(bf16* p, Vf a, int n) {
  alignas(16) uint16_t buf[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(buf), to_bf16(a));
  std::memcpy(p, buf, sizeof(uint16_t) * n);
}

inline Vf load(const f16* p) {
  return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
}
inline Vf load_n(const f16* p, int n) {
  alignas(16) uint16_t buf[8] = {};
  std::memcpy(buf, p, sizeof(uint16_t) * n);
  return {_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(buf)))};
}
inline void store(f16* p, Vf a) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
// p 16-byte aligned.
inline void stream(f16* p, Vf a) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline void store_n(f16* p, Vf a, int n) {
  alignas(16) uint16_t buf[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(buf),
                  _mm256_cvtps_ph(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  std::memcpy(p, buf, sizeof(uint16_t) * n);
}

inline Vf operator+(Vf a, Vf b) { return {_mm256_add_ps(a.v, b.v)}; }
inline Vf operator-(Vf a, Vf b) { return {_mm256_sub_ps(a.v, b.v)}; }
inline Vf operator*(Vf a, Vf b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline Vf operator/(Vf a, Vf b) { return {_mm256_div_ps(a.v, b.v)}; }
inline Vf operator-(Vf a) { return {_mm256_xor_ps(a.v, _mm256_set1_ps(-0.0f))}; }
inline Vf fma(Vf a, Vf b, Vf c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
inline Vf fnma(Vf a, Vf b, Vf c) { return {_mm256_fnmadd_ps(a.v, b.v, c.v)}; }
inline Vf min(Vf a, Vf b) { return {_mm256_min_ps(a.v, b.v)}; }
inline Vf max(Vf a, Vf b) { return {_mm256_max_ps(a.v, b.v)}; }
inline Vf abs(Vf a) { return {_mm256_andnot_ps(_mm256_set1_ps(-0.0f), a.v)}; }
inline Vf sqrt(Vf a) { return {_mm256_sqrt_ps(a.v)}; }
inline Vf floor(Vf a) { return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline Vf round(Vf a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
inline Vf copysign(Vf mag, Vf sign) {
  const __m256 s = _mm256_set1_ps(-0.0f);
  return {_mm256_or_ps(_mm256_andnot_ps(s, mag.v), _mm256_and_ps(s, sign.v))};
}

inline Mask operator<(Vf a, Vf b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)}; }
inline Mask operator<=(Vf a, Vf b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LE_OQ)}; }
inline Mask operator>(Vf a, Vf b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ)}; }
inline Mask operator>=(Vf a, Vf b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_GE_OQ)}; }
inline Mask operator==(Vf a, Vf b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ)}; }
inline Mask isnan(Vf a) { return {_mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q)}; }
inline Mask operator&(Mask a, Mask b) { return {_mm256_and_ps(a.m, b.m)}; }
inline Mask operator|(Mask a, Mask b) { return {_mm256_or_ps(a.m, b.m)}; }
inline bool any(Mask a) { return _mm256_movemask_ps(a.m) != 0; }
inline Vf select(Mask m, Vf if_true, Vf if_false) {
  return {_mm256_blendv_ps(if_false.v, if_true.v, m.m)};
}
// Lane i: tab[bits(idx)[i] & 7] (vpermps, port 5): an 8-entry table lookup.
inline Vf permute8(const float* tab, Vf idx) {
  return {_mm256_permutevar8x32_ps(_mm256_loadu_ps(tab), _mm256_castps_si256(idx.v))};
}
// a and b interleaved: lo = a0 b0 a1 b1 a2 b2 a3 b3, hi the same of
// elements 4..7 (in-lane unpacks and one lane swap, no variable permute).
inline void zip2(Vf a, Vf b, Vf& lo, Vf& hi) {
  const __m256 l = _mm256_unpacklo_ps(a.v, b.v), h = _mm256_unpackhi_ps(a.v, b.v);
  lo.v = _mm256_permute2f128_ps(l, h, 0x20);
  hi.v = _mm256_permute2f128_ps(l, h, 0x31);
}
// The inverse: of x = a0..a7 b0..b7, even = x0 x2 .. x14, odd = x1 x3 .. x15
// (in-lane shuffles and one 64-bit permute each).
inline void unzip2(Vf a, Vf b, Vf& even, Vf& odd) {
  const __m256 e = _mm256_shuffle_ps(a.v, b.v, 0x88), o = _mm256_shuffle_ps(a.v, b.v, 0xDD);
  even.v = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
  odd.v = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xD8));
}

inline Vi cvt_round(Vf a) { return {_mm256_cvtps_epi32(a.v)}; }
inline Vi cvt_trunc(Vf a) { return {_mm256_cvttps_epi32(a.v)}; }
inline Vf cvt_f32(Vi a) { return {_mm256_cvtepi32_ps(a.v)}; }
inline Vi bits(Vf a) { return {_mm256_castps_si256(a.v)}; }
inline Vf from_bits(Vi a) { return {_mm256_castsi256_ps(a.v)}; }
inline Vi operator+(Vi a, Vi b) { return {_mm256_add_epi32(a.v, b.v)}; }
inline Vi operator-(Vi a, Vi b) { return {_mm256_sub_epi32(a.v, b.v)}; }
inline Vi operator&(Vi a, Vi b) { return {_mm256_and_si256(a.v, b.v)}; }
inline Vi operator|(Vi a, Vi b) { return {_mm256_or_si256(a.v, b.v)}; }
template <int k>
inline Vi shl(Vi a) {
  return {_mm256_slli_epi32(a.v, k)};
}
template <int k>
inline Vi shr_arith(Vi a) {
  return {_mm256_srai_epi32(a.v, k)};
}
template <int k>
inline Vi shr_logic(Vi a) {
  return {_mm256_srli_epi32(a.v, k)};
}

inline float reduce_add(Vf a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float reduce_max(Vf a) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float reduce_min(Vf a) {
  __m128 s = _mm_min_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  s = _mm_min_ps(s, _mm_movehl_ps(s, s));
  s = _mm_min_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float first(Vf a) { return _mm256_cvtss_f32(a.v); }

// p * 2^k for the exp kernels of vmath_body.inc, given t = k + kPow2Shifter
// from exp_split: t's low mantissa bits hold k + 191, so shifting them into the
// exponent field gives 2^(k+64) with no conversion; p * 2^(k+64) is exact
// (scale_pow2_shifted_raw, k in [-190, 63]) and the product with 2^-64 rounds
// once (denormals, 0 below).
inline constexpr float kPow2Shifter = 12582912.0f + 191.0f;
inline constexpr float kPow2RawScale = 0x1p64f;  // raw = p * 2^k * kPow2RawScale
inline Vf scale_pow2_shifted_raw(Vf p, Vf t, Vf) { return p * from_bits(shl<23>(bits(t))); }
inline Vf scale_pow2_shifted(Vf p, Vf t, Vf k) {
  return scale_pow2_shifted_raw(p, t, k) * set1(1.0f / kPow2RawScale);
}

// In-register transpose of a kLanes x kLanes tile: lane c of x[r] -> lane r of x[c].
// always_inline: out of line, GCC passes the tile through memory and puts a
// vzeroupper and spills around the call (4% of AVX2 SD cross-attention).
[[gnu::always_inline]] inline void transpose_lanes(Vf* x) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(x[2 * i].v, x[2 * i + 1].v);
    t[2 * i + 1] = _mm256_unpackhi_ps(x[2 * i].v, x[2 * i + 1].v);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {
    x[k].v = _mm256_permute2f128_ps(u[k], u[4 + k], 0x20);
    x[4 + k].v = _mm256_permute2f128_ps(u[k], u[4 + k], 0x31);
  }
}

#include "kernels/simd/lanewise_pair.inc"
#include "kernels/simd/stream_body.inc"
#include "kernels/simd/vmath_body.inc"

}  // namespace OPSNN_ISA_NAMESPACE
}  // namespace opsnn::simd::avx2

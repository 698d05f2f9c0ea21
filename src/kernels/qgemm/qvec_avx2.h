// Byte <-> int32-lane helpers for the quantized kernels (AVX2). Same names
// in qvec_avx512.h and qvec_scalar.h; include after kernels/simd/vec_avx2.h.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/simd/vec_avx2.h"

namespace opsnn::simd::avx2 {

inline Vi load_u8x(const uint8_t* p) {
  return {_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))};
}
inline Vi load_s8x(const int8_t* p) {
  return {_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))};
}
inline Vi loadi(const int32_t* p) {
  return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))};
}
inline void storei(int32_t* p, Vi a) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), a.v); }
inline void storei_n(int32_t* p, Vi a, int n) {
  if (n >= kLanes) return storei(p, a);
  alignas(32) int32_t t[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(t), a.v);
  std::memcpy(p, t, static_cast<size_t>(n) * 4);
}
inline void store_bytes_n(void* p, Vi a, int n) {
  // Lanes hold values in [-128, 255]: keep the low byte of each.
  const __m256i sh = _mm256_shuffle_epi8(
      a.v, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8,
                            12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
  const uint32_t lo = static_cast<uint32_t>(_mm256_extract_epi32(sh, 0));
  const uint32_t hi = static_cast<uint32_t>(_mm256_extract_epi32(sh, 4));
  const uint64_t v = lo | (static_cast<uint64_t>(hi) << 32);
  std::memcpy(p, &v, static_cast<size_t>(n));
}

// The low / high nibble of each lane's low byte as f32 (0..15).
inline Vf nibble_lo(Vi b) { return cvt_f32(b & set1i(15)); }
inline Vf nibble_hi(Vi b) { return cvt_f32(shr_logic<4>(b)); }

}  // namespace opsnn::simd::avx2

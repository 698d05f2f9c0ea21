// Byte <-> int32-lane helpers for the quantized kernels (AVX-512). Same names
// in qvec_avx2.h and qvec_scalar.h; include after kernels/simd/vec_avx512.h.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/simd/vec_avx512.h"

namespace opsnn::simd::avx512 {

// kLanes bytes, zero- / sign-extended to int32 lanes.
inline Vi load_u8x(const uint8_t* p) {
  return {_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
}
inline Vi load_s8x(const int8_t* p) {
  return {_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
}
inline Vi loadi(const int32_t* p) { return {_mm512_loadu_si512(p)}; }
inline void storei(int32_t* p, Vi a) { _mm512_storeu_si512(p, a.v); }
inline void storei_n(int32_t* p, Vi a, int n) { _mm512_mask_storeu_epi32(p, tail_mask(n), a.v); }
// Low byte of each lane (values already in range) to n bytes.
inline void store_bytes_n(void* p, Vi a, int n) {
  _mm_mask_storeu_epi8(p, tail_mask(n), _mm512_cvtepi32_epi8(a.v));
}

// The low / high nibble of each lane's low byte as f32 (0..15): a 16-entry
// table lookup (vpermps reads only the low 4 bits of each index), no mask,
// no int->float conversion.
inline __m512 nibble_table() {
  return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
inline Vf nibble_lo(Vi b) { return {_mm512_permutexvar_ps(b.v, nibble_table())}; }
inline Vf nibble_hi(Vi b) {
  return {_mm512_permutexvar_ps(_mm512_srli_epi32(b.v, 4), nibble_table())};
}

}  // namespace opsnn::simd::avx512

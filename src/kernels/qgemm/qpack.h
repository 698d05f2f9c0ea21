// Packing of int8 rows into the interleaved panel layout shared by A
// (micro-panels of MR rows) and W (panels of NR columns):
//   dst[(k4 * width + i) * 4 + q] = src[i * ld + k4 * 4 + q] ^ flip
// for rows i < rows, zero for rows in [rows, width) and for k >= K.
// This is a transpose of 4-byte elements; it is done with SSE2 4x4 transposes
// of 16-byte row chunks (SSE2 is part of x86-64, so every ISA build uses it),
// with a scalar fallback for the K tail and the last rows (and non-x86).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/isa_namespace.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace opsnn::qgemm {
inline namespace OPSNN_ISA_NAMESPACE {

namespace detail {
// Rows [i0, i1), k4 steps [k40, K4), scalar.
inline void pack_rows_scalar(const uint8_t* src, int64_t ld, int i0, int i1, int width, int64_t K,
                             int64_t k40, uint8_t flip, uint8_t* dst) {
  const int64_t K4 = (K + 3) / 4;
  for (int i = i0; i < i1; ++i) {
    const uint8_t* s = src + i * ld;
    for (int64_t k4 = k40; k4 < K4; ++k4) {
      uint8_t t[4];
      for (int q = 0; q < 4; ++q) {
        const int64_t k = k4 * 4 + q;
        t[q] = k < K ? static_cast<uint8_t>(s[k] ^ flip) : uint8_t{0};
      }
      std::memcpy(dst + (k4 * width + i) * 4, t, 4);
    }
  }
}
}  // namespace detail

inline void pack_panel(const uint8_t* src, int64_t ld, int rows, int width, int64_t K, uint8_t flip,
                       uint8_t* dst) {
  const int64_t K4 = (K + 3) / 4;
  const int64_t rs = static_cast<int64_t>(width) * 4;  // bytes per k4 step
  int i = 0;
#if defined(__SSE2__)
  const int64_t k16 = K / 16 * 4;  // k4 steps covered by whole 16-byte chunks
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  // Groups of 4 rows (the last one may have 1-3: missing rows read as zero
  // and only the group's bytes of each k4 step are stored). Each 16-byte
  // chunk of the group's rows is a 4x4 transpose of 4-byte k groups.
  const __m128i z = _mm_setzero_si128();
  for (; i < rows; i += 4) {
    const int g = std::min(4, rows - i);
    uint8_t* d = dst + i * 4;
    for (int64_t k4 = 0; k4 < k16; k4 += 4) {
      const int64_t o = k4 * 4;
      __m128i r[4];
      for (int q = 0; q < 4; ++q)
        r[q] =
            q < g
                ? _mm_xor_si128(
                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (i + q) * ld + o)), f)
                : z;
      const __m128i t0 = _mm_unpacklo_epi32(r[0], r[1]);  // r0k0 r1k0 r0k1 r1k1
      const __m128i t1 = _mm_unpacklo_epi32(r[2], r[3]);  // r2k0 r3k0 r2k1 r3k1
      const __m128i t2 = _mm_unpackhi_epi32(r[0], r[1]);  // r0k2 r1k2 r0k3 r1k3
      const __m128i t3 = _mm_unpackhi_epi32(r[2], r[3]);
      const __m128i v[4] = {_mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1),
                            _mm_unpacklo_epi64(t2, t3), _mm_unpackhi_epi64(t2, t3)};
      for (int q = 0; q < 4; ++q) {
        uint8_t* dq = d + (k4 + q) * rs;
        if (g == 4) {
          _mm_storeu_si128(reinterpret_cast<__m128i*>(dq), v[q]);
          continue;
        }
        if (g >= 2) _mm_storel_epi64(reinterpret_cast<__m128i*>(dq), v[q]);
        if (g != 2) {  // the row 0 (g = 1) or row 2 (g = 3) bytes
          const int32_t w = _mm_cvtsi128_si32(g == 3 ? _mm_srli_si128(v[q], 8) : v[q]);
          std::memcpy(dq + (g == 3 ? 8 : 0), &w, 4);
        }
      }
    }
    if (k16 < K4) detail::pack_rows_scalar(src, ld, i, i + g, width, K, k16, flip, dst);
  }
#endif
  detail::pack_rows_scalar(src, ld, i, rows, width, K, 0, flip, dst);
  if (rows < width)
    for (int64_t k4 = 0; k4 < K4; ++k4)
      std::memset(dst + (k4 * width + rows) * 4, 0, static_cast<size_t>(width - rows) * 4);
}

// sum_k s[k] over int8 (exact).
inline int32_t row_sum_i8(const int8_t* s, int64_t K) {
  int64_t k = 0;
  int32_t sum = 0;
#if defined(__SSE2__)
  // sum of (s ^ 0x80) as unsigned bytes, minus 128 per byte.
  const __m128i f = _mm_set1_epi8(static_cast<char>(0x80));
  __m128i acc = _mm_setzero_si128();
  for (; k + 16 <= K; k += 16) {
    const __m128i v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k)), f);
    acc = _mm_add_epi64(acc, _mm_sad_epu8(v, _mm_setzero_si128()));
  }
  sum = static_cast<int32_t>(_mm_cvtsi128_si64(acc) +
                             _mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc)) - 128 * k);
#endif
  for (; k < K; ++k) sum += s[k];
  return sum;
}

}  // namespace OPSNN_ISA_NAMESPACE
}  // namespace opsnn::qgemm

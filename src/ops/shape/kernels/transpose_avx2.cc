// In-register transpose tiles for AVX2: 8x8 of 4-byte and 8x8 of 2-byte elements.
#include <immintrin.h>

#include "ops/shape/kernels/copy.h"
#include "ops/shape/kernels/transpose_tile.h"

namespace opsnn::shape {
namespace {

inline void t8x8_4(const float* s, int64_t sl, float* d, int64_t dl) {
  __m256 r0 = _mm256_loadu_ps(s + 0 * sl), r1 = _mm256_loadu_ps(s + 1 * sl);
  __m256 r2 = _mm256_loadu_ps(s + 2 * sl), r3 = _mm256_loadu_ps(s + 3 * sl);
  __m256 r4 = _mm256_loadu_ps(s + 4 * sl), r5 = _mm256_loadu_ps(s + 5 * sl);
  __m256 r6 = _mm256_loadu_ps(s + 6 * sl), r7 = _mm256_loadu_ps(s + 7 * sl);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  r0 = _mm256_shuffle_ps(t0, t2, 0x44);
  r1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  r2 = _mm256_shuffle_ps(t1, t3, 0x44);
  r3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  r4 = _mm256_shuffle_ps(t4, t6, 0x44);
  r5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  r6 = _mm256_shuffle_ps(t5, t7, 0x44);
  r7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(d + 0 * dl, _mm256_permute2f128_ps(r0, r4, 0x20));
  _mm256_storeu_ps(d + 1 * dl, _mm256_permute2f128_ps(r1, r5, 0x20));
  _mm256_storeu_ps(d + 2 * dl, _mm256_permute2f128_ps(r2, r6, 0x20));
  _mm256_storeu_ps(d + 3 * dl, _mm256_permute2f128_ps(r3, r7, 0x20));
  _mm256_storeu_ps(d + 4 * dl, _mm256_permute2f128_ps(r0, r4, 0x31));
  _mm256_storeu_ps(d + 5 * dl, _mm256_permute2f128_ps(r1, r5, 0x31));
  _mm256_storeu_ps(d + 6 * dl, _mm256_permute2f128_ps(r2, r6, 0x31));
  _mm256_storeu_ps(d + 7 * dl, _mm256_permute2f128_ps(r3, r7, 0x31));
}

inline void t8x8_2(const uint16_t* s, int64_t sl, uint16_t* d, int64_t dl) {
  auto ld = [&](int i) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i * sl)); };
  __m128i a0 = ld(0), a1 = ld(1), a2 = ld(2), a3 = ld(3), a4 = ld(4), a5 = ld(5), a6 = ld(6),
          a7 = ld(7);
  __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
  __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
  __m128i b4 = _mm_unpacklo_epi16(a4, a5), b5 = _mm_unpackhi_epi16(a4, a5);
  __m128i b6 = _mm_unpacklo_epi16(a6, a7), b7 = _mm_unpackhi_epi16(a6, a7);
  __m128i c0 = _mm_unpacklo_epi32(b0, b2), c1 = _mm_unpackhi_epi32(b0, b2);
  __m128i c2 = _mm_unpacklo_epi32(b1, b3), c3 = _mm_unpackhi_epi32(b1, b3);
  __m128i c4 = _mm_unpacklo_epi32(b4, b6), c5 = _mm_unpackhi_epi32(b4, b6);
  __m128i c6 = _mm_unpacklo_epi32(b5, b7), c7 = _mm_unpackhi_epi32(b5, b7);
  auto st = [&](int i, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i * dl), v); };
  st(0, _mm_unpacklo_epi64(c0, c4));
  st(1, _mm_unpackhi_epi64(c0, c4));
  st(2, _mm_unpacklo_epi64(c1, c5));
  st(3, _mm_unpackhi_epi64(c1, c5));
  st(4, _mm_unpacklo_epi64(c2, c6));
  st(5, _mm_unpackhi_epi64(c2, c6));
  st(6, _mm_unpacklo_epi64(c3, c7));
  st(7, _mm_unpackhi_epi64(c3, c7));
}

void tile4(const void* src, int64_t sl, void* dst, int64_t dl, int64_t rows, int64_t cols) {
  tile_blocked<8, 8, float>(src, sl, dst, dl, rows, cols, t8x8_4);
}
void tile2(const void* src, int64_t sl, void* dst, int64_t dl, int64_t rows, int64_t cols) {
  // 32 x 32 blocks of sixteen 8x8 tiles: whole 64-byte lines read and written.
  tile_blocked<32, 32, uint16_t>(
      src, sl, dst, dl, rows, cols, [](const uint16_t* s, int64_t sl2, uint16_t* d, int64_t dl2) {
        for (int c = 0; c < 4; ++c)
          for (int q = 0; q < 4; ++q)
            t8x8_2(s + 8 * q * sl2 + 8 * c, sl2, d + 8 * c * dl2 + 8 * q, dl2);
      });
}

}  // namespace

TileKernels tiles_avx2() { return {tile2, tile4}; }

}  // namespace opsnn::shape

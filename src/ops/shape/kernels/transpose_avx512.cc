// In-register 16x16 transpose of 4-byte elements for AVX-512 (2-byte
// elements use the AVX2 8x8 tile).
#include <immintrin.h>

#include <cstdint>

#include "ops/shape/kernels/copy.h"
#include "ops/shape/kernels/transpose_tile.h"

namespace opsnn::shape {
namespace {

template <bool NT>
inline void put(float* p, __m512 v) {
  if constexpr (NT)
    _mm512_stream_ps(p, v);
  else
    _mm512_storeu_ps(p, v);
}

template <bool NT>
inline void t16x16_4(const float* s, int64_t sl, float* d, int64_t dl) {
  __m512 r[16], t[16], u[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(s + i * sl);
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4g + j], lane l: column 4l + j of rows 4g .. 4g + 3.
  for (int g = 0; g < 4; ++g) {
    u[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 x0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    const __m512 x1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    const __m512 y0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 y1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
    put<NT>(d + (0 + j) * dl, _mm512_shuffle_f32x4(x0, y0, 0x88));
    put<NT>(d + (4 + j) * dl, _mm512_shuffle_f32x4(x1, y1, 0x88));
    put<NT>(d + (8 + j) * dl, _mm512_shuffle_f32x4(x0, y0, 0xDD));
    put<NT>(d + (12 + j) * dl, _mm512_shuffle_f32x4(x1, y1, 0xDD));
  }
}

void tile4(const void* src, int64_t sl, void* dst, int64_t dl, int64_t rows, int64_t cols) {
  tile_blocked<16, 16, float>(src, sl, dst, dl, rows, cols, t16x16_4<false>);
}

// Each 16 x 16 tile writes 16 whole destination lines when the destination
// is 64-byte aligned with rows a multiple of 16 floats apart: those go out
// with non-temporal stores (no read-for-ownership, no eviction of the source
// lines still to be read); anything else falls back to tile4.
void tile4_stream(const void* src, int64_t sl, void* dst, int64_t dl, int64_t rows, int64_t cols) {
  if (reinterpret_cast<uintptr_t>(dst) % 64 != 0 || dl % 16 != 0)
    return tile4(src, sl, dst, dl, rows, cols);
  tile_blocked<16, 16, float>(src, sl, dst, dl, rows, cols, t16x16_4<true>);
  _mm_sfence();
}

}  // namespace

TileKernels tiles_avx512() { return {tiles_avx2().tile2, tile4, tile4_stream}; }

}  // namespace opsnn::shape

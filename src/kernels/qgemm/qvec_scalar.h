// Byte <-> int32-lane helpers for the quantized kernels (portable, one lane).
#pragma once

#include <cstdint>

#include "kernels/simd/vec_scalar.h"

namespace opsnn::simd::scalar {

inline Vi load_u8x(const uint8_t* p) { return {*p}; }
inline Vi load_s8x(const int8_t* p) { return {*p}; }
inline Vi loadi(const int32_t* p) { return {*p}; }
inline void storei(int32_t* p, Vi a) { *p = a.v; }
inline void storei_n(int32_t* p, Vi a, int n) {
  if (n > 0) *p = a.v;
}
inline void store_bytes_n(void* p, Vi a, int n) {
  if (n > 0) *static_cast<uint8_t*>(p) = static_cast<uint8_t>(a.v & 0xff);
}

// The low / high nibble of each lane's low byte as f32 (0..15).
inline Vf nibble_lo(Vi b) { return cvt_f32(b & set1i(15)); }
inline Vf nibble_hi(Vi b) { return cvt_f32(shr_logic<4>(b)); }

}  // namespace opsnn::simd::scalar

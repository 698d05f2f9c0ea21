// Element types and f16/bf16 conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace opsnn {

enum class DType : uint8_t { f32, f16, bf16, i8, u8, i32, i64, boolean };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16, DType::i8,
                                       DType::u8,  DType::i32, DType::i64,  DType::boolean};

size_t dtype_size(DType t);
const char* dtype_name(DType t);
// Parses "f32", "float32", "bf16", ... ; throws opsnn::Error on an unknown name.
DType dtype_from_name(std::string_view name);
inline bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

// 16-bit float storage types. Arithmetic is always done in f32.
struct bf16 {
  uint16_t bits;
};
struct f16 {
  uint16_t bits;
};

// Round-to-nearest-even; NaN stays NaN (quiet), overflow rounds to Inf.
inline uint16_t f32_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16_bits_to_f32(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t f32_to_f16_bits(float f);
float f16_bits_to_f32(uint16_t h);

inline bf16 to_bf16(float f) { return bf16{f32_to_bf16_bits(f)}; }
inline f16 to_f16(float f) { return f16{f32_to_f16_bits(f)}; }
inline float to_f32(bf16 v) { return bf16_bits_to_f32(v.bits); }
inline float to_f32(f16 v) { return f16_bits_to_f32(v.bits); }
inline float to_f32(float v) { return v; }

// Vectorised bulk conversion (uses F16C / AVX-512 when the CPU has them).
void convert_f32_to_bf16(const float* src, bf16* dst, size_t n);
void convert_bf16_to_f32(const bf16* src, float* dst, size_t n);
void convert_f32_to_f16(const float* src, f16* dst, size_t n);
void convert_f16_to_f32(const f16* src, float* dst, size_t n);

template <class T>
struct dtype_of;
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct dtype_of<f16> {
  static constexpr DType value = DType::f16;
};
template <>
struct dtype_of<bf16> {
  static constexpr DType value = DType::bf16;
};
template <>
struct dtype_of<int8_t> {
  static constexpr DType value = DType::i8;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::u8;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::i32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::i64;
};
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::boolean;
};

}  // namespace opsnn

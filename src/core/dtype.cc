#include "opsnn/dtype.h"

#include <cmath>
#include <cstring>
#include <string>

#include "core/convert.h"
#include "opsnn/cpu.h"
#include "opsnn/error.h"
#include "opsnn/thread_pool.h"

namespace opsnn {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32:
    case DType::i32:
      return 4;
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::i8:
    case DType::u8:
    case DType::boolean:
      return 1;
    case DType::i64:
      return 8;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::i8:
      return "i8";
    case DType::u8:
      return "u8";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
    case DType::boolean:
      return "bool";
  }
  return "?";
}

DType dtype_from_name(std::string_view name) {
  for (DType t : kAllDTypes)
    if (name == dtype_name(t)) return t;
  if (name == "float32" || name == "float") return DType::f32;
  if (name == "float16" || name == "half") return DType::f16;
  if (name == "bfloat16") return DType::bf16;
  if (name == "int8") return DType::i8;
  if (name == "uint8") return DType::u8;
  if (name == "int32") return DType::i32;
  if (name == "int64") return DType::i64;
  if (name == "boolean") return DType::boolean;
  throw Error("dtype", "name", "one of f32|f16|bf16|i8|u8|i32|i64|bool",
              "'" + std::string(name) + "'");
}

// IEEE binary16 with round-to-nearest-even, done on the bits.
uint16_t f32_to_f16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (ax < 0x38800000u) {                                               // f16 subnormal or 0
    if (ax < 0x33000000u) return static_cast<uint16_t>(sign);           // < half the min subnormal
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14 + (113 - e) - ... : bits to drop
    uint32_t v = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (v & 1u))) ++v;
    return static_cast<uint16_t>(sign | v);
  }
  uint32_t v = ax - 0x38000000u;  // rebias exponent 127 -> 15
  const uint32_t rem = v & 0x1fffu;
  v >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) ++v;
  return static_cast<uint16_t>(sign | v);
}

float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t x;
  if (e == 0) {
    if (m == 0) {
      x = sign;
    } else {
      const float v = std::ldexp(static_cast<float>(m), -24);
      std::memcpy(&x, &v, 4);
      x |= sign;
    }
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m << 13);
  } else {
    x = sign | ((e + 112) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

namespace {
const detail::ConvertFns& convert_fns() {
  switch (active_isa()) {
    case Isa::avx512:
      return detail::convert_fns_avx512();
    case Isa::avx2:
      return detail::convert_fns_avx2();
    default:
      return detail::convert_fns_scalar();
  }
}
}  // namespace

void convert_f32_to_bf16(const float* s, bf16* d, size_t n) { convert_fns().f32_to_bf16(s, d, n); }
void convert_bf16_to_f32(const bf16* s, float* d, size_t n) { convert_fns().bf16_to_f32(s, d, n); }
void convert_f32_to_f16(const float* s, f16* d, size_t n) { convert_fns().f32_to_f16(s, d, n); }
void convert_f16_to_f32(const f16* s, float* d, size_t n) { convert_fns().f16_to_f32(s, d, n); }

bool convert_contiguous(const void* src, DType st, void* dst, DType dt, size_t n) {
  auto half_or_f32 = [](DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; };
  if (!half_or_f32(st) || !half_or_f32(dt) || (st != DType::f32 && dt != DType::f32 && st != dt))
    return false;
  const auto* s = static_cast<const char*>(src);
  auto* d = static_cast<char*>(dst);
  const size_t ss = dtype_size(st), ds = dtype_size(dt);
  const detail::ConvertFns& f = convert_fns();
  parallel_for(static_cast<int64_t>(n), 1 << 14, [&](int64_t i0, int64_t i1) {
    const size_t m = static_cast<size_t>(i1 - i0);
    const char* sp = s + static_cast<size_t>(i0) * ss;
    char* dp = d + static_cast<size_t>(i0) * ds;
    if (st == dt)
      std::memcpy(dp, sp, m * ss);
    else if (st == DType::bf16)
      f.bf16_to_f32(reinterpret_cast<const bf16*>(sp), reinterpret_cast<float*>(dp), m);
    else if (st == DType::f16)
      f.f16_to_f32(reinterpret_cast<const f16*>(sp), reinterpret_cast<float*>(dp), m);
    else if (dt == DType::bf16)
      f.f32_to_bf16(reinterpret_cast<const float*>(sp), reinterpret_cast<bf16*>(dp), m);
    else
      f.f32_to_f16(reinterpret_cast<const float*>(sp), reinterpret_cast<f16*>(dp), m);
  });
  return true;
}

}  // namespace opsnn

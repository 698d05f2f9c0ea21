// One f32 lane in portable C++: the scalar path with the same names as
// vec_avx2.h / vec_avx512.h, so kernels written once also build without SIMD.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "opsnn/dtype.h"

namespace opsnn::simd::scalar {

inline constexpr int kLanes = 1;
inline constexpr const char* kIsaName = "scalar";

struct Vf {
  float v;
};
struct Vi {
  int32_t v;
};
struct Mask {
  bool m;
};

inline Vf zero() { return {0.0f}; }
inline Vf set1(float x) { return {x}; }
inline Vi set1i(int32_t x) { return {x}; }

inline Vf load(const float* p) { return {*p}; }
// base[idx[i]] for each lane (idx: kLanes int32 offsets in elements).
inline Vf gather(const float* base, const int32_t* idx) { return {base[*idx]}; }
inline void store(float* p, Vf a) { *p = a.v; }
inline void stream(float* p, Vf a) { *p = a.v; }
// Orders earlier stream() stores before later stores (call once after a run of them).
inline void stream_fence() {}
inline Vf load_n(const float* p, int n) { return {n > 0 ? *p : 0.0f}; }
inline void store_n(float* p, Vf a, int n) {
  if (n > 0) *p = a.v;
}
inline Vf load(const bf16* p) { return {bf16_bits_to_f32(p->bits)}; }
// bf16 GEMM panels in plain column order here (see vec_avx2.h).
inline constexpr bool kBf16PanelPairs = false;
inline void load_bf16_pair(const bf16* p, Vf& lo, Vf& hi) {
  lo = load(p);
  hi = load(p + kLanes);
}
inline Vf load_n(const bf16* p, int n) { return {n > 0 ? bf16_bits_to_f32(p->bits) : 0.0f}; }
inline void store(bf16* p, Vf a) { p->bits = f32_to_bf16_bits(a.v); }
inline void stream(bf16* p, Vf a) { store(p, a); }
inline void store_n(bf16* p, Vf a, int n) {
  if (n > 0) store(p, a);
}
inline Vf load(const f16* p) { return {f16_bits_to_f32(p->bits)}; }
inline Vf load_n(const f16* p, int n) { return {n > 0 ? f16_bits_to_f32(p->bits) : 0.0f}; }
inline void store(f16* p, Vf a) { p->bits = f32_to_f16_bits(a.v); }
inline void stream(f16* p, Vf a) { store(p, a); }
inline void store_n(f16* p, Vf a, int n) {
  if (n > 0) store(p, a);
}

inline Vf operator+(Vf a, Vf b) { return {a.v + b.v}; }
inline Vf operator-(Vf a, Vf b) { return {a.v - b.v}; }
inline Vf operator*(Vf a, Vf b) { return {a.v * b.v}; }
inline Vf operator/(Vf a, Vf b) { return {a.v / b.v}; }
inline Vf operator-(Vf a) { return {-a.v}; }
inline Vf fma(Vf a, Vf b, Vf c) { return {std::fma(a.v, b.v, c.v)}; }
inline Vf fnma(Vf a, Vf b, Vf c) { return {std::fma(-a.v, b.v, c.v)}; }
// Same NaN rule as minps/maxps: the second operand when either is NaN.
inline Vf min(Vf a, Vf b) { return {a.v < b.v ? a.v : b.v}; }
inline Vf max(Vf a, Vf b) { return {a.v > b.v ? a.v : b.v}; }
inline Vf abs(Vf a) { return {std::fabs(a.v)}; }
inline Vf sqrt(Vf a) { return {std::sqrt(a.v)}; }
inline Vf floor(Vf a) { return {std::floor(a.v)}; }
inline Vf round(Vf a) { return {std::nearbyint(a.v)}; }
inline Vf copysign(Vf mag, Vf sign) { return {std::copysign(mag.v, sign.v)}; }

inline Mask operator<(Vf a, Vf b) { return {a.v < b.v}; }
inline Mask operator<=(Vf a, Vf b) { return {a.v <= b.v}; }
inline Mask operator>(Vf a, Vf b) { return {a.v > b.v}; }
inline Mask operator>=(Vf a, Vf b) { return {a.v >= b.v}; }
inline Mask operator==(Vf a, Vf b) { return {a.v == b.v}; }
inline Mask isnan(Vf a) { return {a.v != a.v}; }
inline Mask operator&(Mask a, Mask b) { return {a.m && b.m}; }
inline Mask operator|(Mask a, Mask b) { return {a.m || b.m}; }
inline bool any(Mask a) { return a.m; }
inline Vf select(Mask m, Vf if_true, Vf if_false) { return m.m ? if_true : if_false; }
// tab[bits(idx) & 7], as vpermps: an 8-entry table lookup.
// In-register transpose of a kLanes x kLanes tile (one lane: nothing to do).
inline void transpose_lanes(Vf*) {}
inline Vf permute8(const float* tab, Vf idx) {
  uint32_t b;
  std::memcpy(&b, &idx.v, sizeof b);
  return {tab[b & 7u]};
}
// a and b interleaved (one lane each: lo = a, hi = b).
inline void zip2(Vf a, Vf b, Vf& lo, Vf& hi) {
  lo = a;
  hi = b;
}
// The inverse (of x = a0 b0: even = a0, odd = b0).
inline void unzip2(Vf a, Vf b, Vf& even, Vf& odd) {
  even = a;
  odd = b;
}

// As cvtps2dq / cvttps2dq: NaN and values outside int32 give INT32_MIN (a
// plain cast would be undefined behaviour).
inline int32_t to_i32_like_x86(float v) {
  return v >= -2147483648.0f && v < 2147483648.0f ? static_cast<int32_t>(v) : INT32_MIN;
}
inline Vi cvt_round(Vf a) { return {to_i32_like_x86(std::nearbyint(a.v))}; }
inline Vi cvt_trunc(Vf a) { return {to_i32_like_x86(a.v)}; }
inline Vf cvt_f32(Vi a) { return {static_cast<float>(a.v)}; }
inline Vi bits(Vf a) {
  Vi r;
  std::memcpy(&r.v, &a.v, 4);
  return r;
}
inline Vf from_bits(Vi a) {
  Vf r;
  std::memcpy(&r.v, &a.v, 4);
  return r;
}
inline Vi operator+(Vi a, Vi b) {
  return {static_cast<int32_t>(static_cast<uint32_t>(a.v) + static_cast<uint32_t>(b.v))};
}
inline Vi operator-(Vi a, Vi b) {
  return {static_cast<int32_t>(static_cast<uint32_t>(a.v) - static_cast<uint32_t>(b.v))};
}
inline Vi operator&(Vi a, Vi b) { return {a.v & b.v}; }
inline Vi operator|(Vi a, Vi b) { return {a.v | b.v}; }
template <int k>
inline Vi shl(Vi a) {
  return {static_cast<int32_t>(static_cast<uint32_t>(a.v) << k)};
}
template <int k>
inline Vi shr_arith(Vi a) {
  return {a.v >> k};
}
template <int k>
inline Vi shr_logic(Vi a) {
  return {static_cast<int32_t>(static_cast<uint32_t>(a.v) >> k)};
}

inline float reduce_add(Vf a) { return a.v; }
inline float reduce_max(Vf a) { return a.v; }
inline float reduce_min(Vf a) { return a.v; }
inline float first(Vf a) { return a.v; }

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

#include "kernels/simd/lanewise_pair.inc"
#include "kernels/simd/stream_body.inc"
#include "kernels/simd/vmath_body.inc"

}  // namespace opsnn::simd::scalar

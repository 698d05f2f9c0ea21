// int8 GEMM with AVX-VNNI (256-bit vpdpbusd): 6 rows x 16 columns per microkernel.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "kernels/qgemm/qgemm.h"
#include "kernels/qgemm/qvec_avx2.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2::vnni {
constexpr int kMR = 6, kNRV = 2;
using VI = __m256i;
inline VI vzero() { return _mm256_setzero_si256(); }
inline VI loadw(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline VI bcast4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}
// acc += u8(a) . s8(w) (VEX-encoded AVX-VNNI; inline asm for the same
// reason as in qgemm_avx512vnni.cc).
inline VI dp(VI acc, VI a, VI w) {
  __asm__("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(a), "x"(w));
  return acc;
}
inline VI loadc(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline void storev(int32_t* p, VI v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
#include "kernels/qgemm/qgemm_impl.h"
}  // namespace opsnn::simd::avx2::vnni

namespace opsnn::qgemm {
const KernelFns& fns_avxvnni() {
  static const KernelFns f{"6x16_avxvnni", simd::avx2::vnni::kNR, simd::avx2::vnni::kMR,
                           &simd::avx2::vnni::run};
  return f;
}
}  // namespace opsnn::qgemm

// int8 GEMM with AVX-512 VNNI (vpdpbusd), two register tilings:
//   12 rows x 32 columns: best when K is short (the W panel slice and the A
//                         micro-panel fit L1 together);
//   6 rows x 64 columns:  fewer loads/broadcasts per vpdpbusd (10 per 24 vs
//                         14 per 24); best for K >= 1024.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "kernels/qgemm/qgemm.h"
#include "kernels/qgemm/qvec_avx512.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512 {
namespace vnni_ops {
using VI = __m512i;
inline VI vzero() { return _mm512_setzero_si512(); }
inline VI loadw(const int8_t* p) { return _mm512_loadu_si512(p); }
inline VI bcast4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}
// acc += u8(a) . s8(w). Inline asm: with the intrinsic GCC 12 copies and
// spills every accumulator of the tile on each k step (3x slower).
inline VI dp(VI acc, VI a, VI w) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(w));
  return acc;
}
inline VI loadc(const int32_t* p) { return _mm512_loadu_si512(p); }
inline void storev(int32_t* p, VI v) { _mm512_storeu_si512(p, v); }
}  // namespace vnni_ops

namespace vnni {
using namespace vnni_ops;
constexpr int kMR = 12, kNRV = 2;
#include "kernels/qgemm/qgemm_impl.h"
}  // namespace vnni

namespace vnni_wide {
using namespace vnni_ops;
constexpr int kMR = 6, kNRV = 4;
#include "kernels/qgemm/qgemm_impl.h"
}  // namespace vnni_wide
}  // namespace opsnn::simd::avx512

namespace opsnn::qgemm {
const KernelFns& fns_avx512vnni() {
  static const KernelFns f{"12x32_avx512vnni", simd::avx512::vnni::kNR, simd::avx512::vnni::kMR,
                           &simd::avx512::vnni::run};
  return f;
}
const KernelFns& fns_avx512vnni_wide() {
  static const KernelFns f{"6x64_avx512vnni", simd::avx512::vnni_wide::kNR,
                           simd::avx512::vnni_wide::kMR, &simd::avx512::vnni_wide::run};
  return f;
}
}  // namespace opsnn::qgemm

// int8 GEMM on plain AVX2: the u8 x s8 4-term dot product emulated exactly by
// widening to 16 bits (even/odd bytes) and two vpmaddwd; vpmaddubsw is not
// used because its 16-bit pair sums saturate (255 * 127 * 2 > 32767).
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "kernels/qgemm/qgemm.h"
#include "kernels/qgemm/qvec_avx2.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2::plain {
constexpr int kMR = 4, kNRV = 2;
#include "kernels/qgemm/qgemm_ops_avx2.inc"
inline VI dp(VI acc, VI a, VI w) {
  const VI a_even = _mm256_and_si256(a, _mm256_set1_epi16(0x00ff));
  const VI a_odd = _mm256_srli_epi16(a, 8);
  const VI w_even = _mm256_srai_epi16(_mm256_slli_epi16(w, 8), 8);
  const VI w_odd = _mm256_srai_epi16(w, 8);
  const VI s = _mm256_add_epi32(_mm256_madd_epi16(a_even, w_even), _mm256_madd_epi16(a_odd, w_odd));
  return _mm256_add_epi32(acc, s);
}
#include "kernels/qgemm/qgemm_impl.h"
}  // namespace opsnn::simd::avx2::plain

namespace opsnn::qgemm {
const KernelFns& fns_avx2() {
  static const KernelFns f{"4x16_avx2", simd::avx2::plain::kNR, simd::avx2::plain::kMR,
                           &simd::avx2::plain::run};
  return f;
}
}  // namespace opsnn::qgemm

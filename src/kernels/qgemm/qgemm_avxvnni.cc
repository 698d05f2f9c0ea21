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
#include "kernels/qgemm/qgemm_ops_avx2.inc"
// acc += u8(a) . s8(w) (VEX-encoded AVX-VNNI; inline asm for the same
// reason as in qgemm_avx512vnni.cc).
inline VI dp(VI acc, VI a, VI w) {
  __asm__("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(a), "x"(w));
  return acc;
}
#include "kernels/qgemm/qgemm_impl.h"
}  // namespace opsnn::simd::avx2::vnni

namespace opsnn::qgemm {
const KernelFns& fns_avxvnni() {
  static const KernelFns f{"6x16_avxvnni", simd::avx2::vnni::kNR, simd::avx2::vnni::kMR,
                           &simd::avx2::vnni::run};
  return f;
}
}  // namespace opsnn::qgemm

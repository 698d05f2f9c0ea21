#include <immintrin.h>

#include "profile/limits.h"

namespace opsnn::detail {

double fma_loop_avx2(int64_t iters) {
  // 12 independent chains in named registers (an array here made GCC keep
  // them on the stack): enough to cover 2 FMA pipes x 4-cycle latency.
  __m256 c0 = _mm256_set1_ps(0.f), c1 = _mm256_set1_ps(1.f), c2 = _mm256_set1_ps(2.f),
         c3 = _mm256_set1_ps(3.f);
  __m256 c4 = _mm256_set1_ps(4.f), c5 = _mm256_set1_ps(5.f), c6 = _mm256_set1_ps(6.f),
         c7 = _mm256_set1_ps(7.f);
  __m256 c8 = _mm256_set1_ps(8.f), c9 = _mm256_set1_ps(9.f), c10 = _mm256_set1_ps(10.f),
         c11 = _mm256_set1_ps(11.f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
    c0 = _mm256_fmadd_ps(c0, a, b);
    c1 = _mm256_fmadd_ps(c1, a, b);
    c2 = _mm256_fmadd_ps(c2, a, b);
    c3 = _mm256_fmadd_ps(c3, a, b);
    c4 = _mm256_fmadd_ps(c4, a, b);
    c5 = _mm256_fmadd_ps(c5, a, b);
    c6 = _mm256_fmadd_ps(c6, a, b);
    c7 = _mm256_fmadd_ps(c7, a, b);
    c8 = _mm256_fmadd_ps(c8, a, b);
    c9 = _mm256_fmadd_ps(c9, a, b);
    c10 = _mm256_fmadd_ps(c10, a, b);
    c11 = _mm256_fmadd_ps(c11, a, b);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                           _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
  alignas(64) float out[8];
  _mm256_store_ps(out, s);
  volatile float sink = out[0];
  (void)sink;
  return static_cast<double>(iters) * 12 * 8 * 2;
}

uint32_t read_words_avx2(const uint32_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  const auto* v = reinterpret_cast<const __m256i*>(p);
  size_t i = 0;
  for (; i + 32 <= n; i += 32, v += 4) {
    a0 = _mm256_xor_si256(a0, _mm256_loadu_si256(v));
    a1 = _mm256_xor_si256(a1, _mm256_loadu_si256(v + 1));
    a2 = _mm256_xor_si256(a2, _mm256_loadu_si256(v + 2));
    a3 = _mm256_xor_si256(a3, _mm256_loadu_si256(v + 3));
  }
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3)));
  uint32_t s = 0;
  for (uint32_t x : lanes) s ^= x;
  for (; i < n; ++i) s ^= p[i];
  return s;
}

void stream_copy_avx2(float* dst, const float* src, size_t n) {
  for (size_t i = 0; i + 64 <= n; i += 64)
    for (size_t k = 0; k < 64; k += 8) _mm256_stream_ps(dst + i + k, _mm256_load_ps(src + i + k));
  _mm_sfence();
}

}  // namespace opsnn::detail

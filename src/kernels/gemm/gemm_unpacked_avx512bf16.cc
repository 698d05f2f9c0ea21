// The unpacked-weight path (gemm_unpacked.h) for a transposed bf16 B ([N, K],
// a linear weight) and a bf16 A with unit column stride on AVX512_BF16: the
// k-pairs of a weight row and of an A row are adjacent already, so the dot
// products run on vdpbf16ps (32 products per instruction, no conversion),
// which is what keeps 8 rows of A at the weight stream's speed.
#include <algorithm>
#include <array>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm_unpacked.h"
#include "kernels/simd/vec_avx512.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512::unpacked_dp {
inline constexpr int kRmG = 8, kRmNv = 2, kRmNv1 = 8, kDotG = 4, kDotR = 4, kDotR1 = 8;
#include "kernels/gemm/gemm_unpacked_impl.h"

namespace dp {

using detail::unp::kDotKb;
using detail::unp::kDotPfBytes;
using detail::unp::kDotTile;
using detail::unp::kMaxRows;

inline __m512bh load_bh(const bf16* p) { return (__m512bh)_mm512_loadu_si512(p); }
inline __m512bh load_bh_n(const bf16* p, int n) {
  return (__m512bh)_mm512_maskz_loadu_epi16(static_cast<__mmask32>((uint64_t{1} << n) - 1), p);
}

// G rows of A against R weight rows over [k0, k0 + kl): 16-lane partial sums
// in part (row i, weight row r at part + (i*R + r)*16; floats, not __m512, in
// the signature: a vector type as a template argument loses its attributes).
template <int G, int R>
void span(int64_t k0, int64_t kl, const bf16* a, int64_t lda, const bf16* const* w, float* part) {
  constexpr int64_t kPf = kDotPfBytes / 2;
  __m512 acc[G][R];
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[i][r] = _mm512_load_ps(part + (i * R + r) * 16);
  const int64_t ke = k0 + kl;
  int64_t k = k0;
  for (; k + 32 <= ke; k += 32) {
    __m512bh wv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      wv[r] = load_bh(w[r] + k);
      __builtin_prefetch(w[r] + k + kPf, 0, 2);
    }
#pragma GCC unroll 16
    for (int i = 0; i < G; ++i) {
      const __m512bh av = load_bh(a + i * lda + k);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], av, wv[r]);
    }
  }
  if (k < ke) {
    const int n = static_cast<int>(ke - k);
    __m512bh wv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) wv[r] = load_bh_n(w[r] + k, n);
#pragma GCC unroll 16
    for (int i = 0; i < G; ++i) {
      const __m512bh av = load_bh_n(a + i * lda + k, n);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], av, wv[r]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) _mm512_store_ps(part + (i * R + r) * 16, acc[i][r]);
}

template <int R>
using SpanFn = void (*)(int64_t, int64_t, const bf16*, int64_t, const bf16* const*, float*);
template <int R, int... Gs>
constexpr auto span_table(std::integer_sequence<int, Gs...>) {
  return std::array<SpanFn<R>, sizeof...(Gs)>{&span<Gs + 1, R>...};
}

// C tile [rows, ncols) = A·W[tile rows]^T (as detail::unp::dot_tile).
template <int G, int R>
void tile(int rows, int64_t K, const bf16* a, int64_t lda, const bf16* w, int64_t ldw, int ncols,
          float* c, int64_t ldc) {
  static constexpr auto fns = span_table<R>(std::make_integer_sequence<int, G>());
  for (int j0 = 0; j0 < ncols; j0 += R) {
    const bf16* wr[R];
    for (int r = 0; r < R; ++r) wr[r] = w + (j0 + r < ncols ? j0 + r : j0) * ldw;
    alignas(64) float part[kMaxRows * R * 16];
    for (int e = 0; e < rows * R * 16; ++e) part[e] = 0.0f;
    for (int64_t k0 = 0; k0 < K; k0 += kDotKb) {
      const int64_t kl = std::min(kDotKb, K - k0);
      for (int r0 = 0; r0 < rows; r0 += G)
        fns[std::min(G, rows - r0) - 1](k0, kl, a + r0 * lda, lda, wr, part + r0 * R * 16);
    }
    for (int i = 0; i < rows; ++i)
      for (int r = 0; r < R && j0 + r < ncols; ++r)
        c[i * ldc + j0 + r] = _mm512_reduce_add_ps(_mm512_load_ps(part + (i * R + r) * 16));
  }
}

template <int G, int R>
void run(int rows, int64_t N, int64_t K, const bf16* a, int64_t lda, const bf16* w, int64_t ldw,
         const gemm::OutView& out, const gemm::Epilogue& ep) {
  detail::unp::run_chunks(rows, N, kDotTile, out, ep,
                          [&](int64_t j, int ncols, float* c, int64_t ldc) {
                            tile<G, R>(rows, K, a, lda, w + j * ldw, ldw, ncols, c, ldc);
                          });
}

void run_entry(const gemm::Params&, int64_t M, int64_t N, int64_t K, const bf16* a, int64_t lda,
               const gemm::MatView& b, const gemm::OutView& out, const gemm::Epilogue& ep) {
  const bf16* w = static_cast<const bf16*>(b.p);
  if (M == 1) return run<1, 8>(1, N, K, a, lda, w, b.cs, out, ep);
  return run<4, 4>(static_cast<int>(M), N, K, a, lda, w, b.cs, out, ep);
}

}  // namespace dp
}  // namespace opsnn::simd::avx512::unpacked_dp

namespace opsnn::gemm {
UnpackedDpFn unpacked_dp_avx512bf16() { return &simd::avx512::unpacked_dp::dp::run_entry; }
}  // namespace opsnn::gemm

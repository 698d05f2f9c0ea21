// The unpacked-weight path (gemm_unpacked.h) for a bf16 B and a bf16 A with
// unit column stride on AVX512_BF16, on vdpbf16ps (32 products per
// instruction, no conversion: what keeps 8 rows of A at the weight stream's
// speed on Zen 4, whose 512-bit FMAs are double-pumped). Transposed B ([N, K],
// a linear weight): the k-pairs of a weight row and of an A row are adjacent
// already. Row-major B: two rows interleaved into k-pairs in registers.
#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm_unpacked.h"
#include "kernels/simd/vec_avx512.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512::unpacked_dp {
// Tiles of dp::run_entry: transposed B 4x6 / 1x8, row-major B 4x3 / 1x4 (of
// 32-column k-pair vectors, two accumulators each); 8x1 and 4x4 ran 0.74-0.85
// of the packed time at M = 8, these 0.83-1.3.
inline constexpr int kRmG = 4, kRmNv = 3, kRmNv1 = 4, kDotG = 4, kDotR = 6, kDotR1 = 8;
// Rows of B per sub-block when the row groups share a strip (rm_chunk).
inline constexpr int64_t kRmStripRows = 64;
inline constexpr bool kDotPairs = true;  // AVX-512's lanes, as gemm_unpacked_avx512.cc
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
  detail::unp::run_chunks(rows, N, kDotTile, kDotTile, out, ep,
                          [&](int64_t j, int ncols, float* c, int64_t ldc) {
                            tile<G, R>(rows, K, a, lda, w + j * ldw, ldw, ncols, c, ldc);
                          });
}

// ---- row-major B ([K, N], unit column stride) -------------------------------------
// Rows k and k + 1 of a 32-column vector interleaved into k-pairs
// (vpunpck{l,h}wd, per 128-bit lane): the "lo" accumulator holds columns
// {0-3, 8-11, 16-19, 24-27}, "hi" {4-7, 12-15, 20-23, 28-31}; the finish
// puts them back in order. A k-pair of an A row is one 32-bit broadcast.
inline __m512i load_row(const bf16* p, int n) {
  return n >= 32 ? _mm512_loadu_si512(p)
                 : _mm512_maskz_loadu_epi16(static_cast<__mmask32>((uint64_t{1} << n) - 1), p);
}

// G rows x [0, ncols) (<= NV*32) over kl rows of B from an even row: the
// scrambled partial sums continue through part (resume); finish writes
// c = sums in column order instead. Strip: the interleaved k-pair vectors
// are also written to `strip` (the first row group of several: kWrite), or
// read from there instead of from B (the next groups: kRead).
enum class Strip { kNone, kWrite, kRead };
template <int G, int NV, Strip S>
void rm_span(int64_t kl, const bf16* a, int64_t lda, const bf16* b, int64_t ldb, int ncols,
             int64_t pf_rows, float* part, int64_t ldp, bool resume, float* c, int64_t ldc,
             bool finish, bf16* strip) {
  __m512 acc[G][2 * NV];
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < 2 * NV; ++v)
      acc[i][v] = resume ? _mm512_loadu_ps(part + i * ldp + v * 16) : _mm512_setzero_ps();
  auto step = [&](const bf16* r0p, const bf16* r1p, const bf16* ak, bool pair, bf16* sp) {
    __m512bh lo[NV], hi[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      if constexpr (S == Strip::kRead) {
        lo[v] = load_bh(sp + 64 * v);
        hi[v] = load_bh(sp + 64 * v + 32);
        continue;
      }
      const int n = ncols - v * 32;
      const __m512i r0 = n > 0 ? load_row(r0p + v * 32, n) : _mm512_setzero_si512();
      const __m512i r1 = n > 0 && pair ? load_row(r1p + v * 32, n) : _mm512_setzero_si512();
      lo[v] = (__m512bh)_mm512_unpacklo_epi16(r0, r1);
      hi[v] = (__m512bh)_mm512_unpackhi_epi16(r0, r1);
      if constexpr (S == Strip::kWrite) {
        _mm512_store_si512(sp + 64 * v, (__m512i)lo[v]);
        _mm512_store_si512(sp + 64 * v + 32, (__m512i)hi[v]);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < G; ++i) {
      uint32_t w = 0;
      std::memcpy(&w, ak + i * lda, pair ? 4 : 2);
      const __m512bh ap = (__m512bh)_mm512_set1_epi32(static_cast<int>(w));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        acc[i][2 * v] = _mm512_dpbf16_ps(acc[i][2 * v], ap, lo[v]);
        acc[i][2 * v + 1] = _mm512_dpbf16_ps(acc[i][2 * v + 1], ap, hi[v]);
      }
    }
  };
  // Where row k's k-pair goes in the strip (none without one).
  auto at = [&](int64_t k) { return S == Strip::kNone ? nullptr : strip + k / 2 * NV * 64; };
  int64_t k = 0;
  for (; k + 2 <= kl; k += 2) {
    const bf16* r0 = b + k * ldb;
    if constexpr (S != Strip::kRead) {
      const char* pf0 = reinterpret_cast<const char*>(r0 + pf_rows * ldb);
      const char* pf1 = reinterpret_cast<const char*>(r0 + (pf_rows + 1) * ldb);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        __builtin_prefetch(pf0 + v * 64, 0, 2);
        __builtin_prefetch(pf1 + v * 64, 0, 2);
      }
    }
    step(r0, r0 + ldb, a + k, true, at(k));
  }
  if (k < kl)  // odd K: the last row pairs with 0
    step(b + k * ldb, nullptr, a + k, false, at(k));
  const __m512i idx0 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i idx1 =
      _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      if (!finish) {
        _mm512_storeu_ps(part + i * ldp + v * 32, acc[i][2 * v]);
        _mm512_storeu_ps(part + i * ldp + v * 32 + 16, acc[i][2 * v + 1]);
        continue;
      }
      const __m512 x[2] = {_mm512_permutex2var_ps(acc[i][2 * v], idx0, acc[i][2 * v + 1]),
                           _mm512_permutex2var_ps(acc[i][2 * v], idx1, acc[i][2 * v + 1])};
      for (int h = 0; h < 2; ++h) {
        const int n = ncols - v * 32 - h * 16;
        if (n >= 16)
          _mm512_storeu_ps(c + i * ldc + v * 32 + h * 16, x[h]);
        else if (n > 0)
          _mm512_mask_storeu_ps(c + i * ldc + v * 32 + h * 16,
                                static_cast<__mmask16>((1u << n) - 1), x[h]);
      }
    }
}

template <int NV>
using RmSpanFn = void (*)(int64_t, const bf16*, int64_t, const bf16*, int64_t, int, int64_t, float*,
                          int64_t, bool, float*, int64_t, bool, bf16*);
template <int NV, Strip S, int... Gs>
constexpr auto rm_table(std::integer_sequence<int, Gs...>) {
  return std::array<RmSpanFn<NV>, sizeof...(Gs)>{&rm_span<Gs + 1, NV, S>...};
}

// As detail::unp::rm_chunk, over all of K at once (no K-blocks: the sums
// stay f32 in registers or part) in sub-blocks of an even number of rows.
// With `strip` (more than one row group, and B's rows alias in L1: a row
// stride of a multiple of 1 KiB, N = 4096), the first group leaves each
// sub-block's k-pair vectors there (kRmStripRows rows) and the others read
// them. Read again from B a sub-block had to fit the L1's ways for the
// rows' one set (8 rows), and each span reloaded and stored its 24
// accumulators every 4 k-pairs. Zen 4, 2 threads, `opsnn bench` alternated:
// bf16 matmul 8x4096x4096 1.22-1.29 -> 0.90-0.95 ms (pre-packed 0.93-0.96),
// 16x4096x4096 2.44-2.46 -> 1.57-1.59, 6x4096x4096 0.95-0.97 -> 0.69. Where
// rows do not alias (N = 4000, 11008) B read again stays faster (the strip
// there: 8x4000x4096 0.75-0.80 -> 0.85-1.5 ms).
template <int G, int NV>
void rm_chunk(int rows, int64_t K, int64_t sub, const bf16* a, int64_t lda, const bf16* b,
              int64_t ldb, int ncols, float* part, float* c, int64_t ldc, bf16* strip) {
  constexpr int NR = NV * 32;
  constexpr auto seq = std::make_integer_sequence<int, G>();
  static constexpr auto plain = rm_table<NV, Strip::kNone>(seq);
  static constexpr auto write = rm_table<NV, Strip::kWrite>(seq);
  static constexpr auto read = rm_table<NV, Strip::kRead>(seq);
  if (K == 0) {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < ncols; ++j) c[i * ldc + j] = 0.0f;
    return;
  }
  const int64_t ldp = gemm::ceil_div(ncols, NR) * NR;
  for (int64_t s0 = 0; s0 < K; s0 += sub) {
    const int64_t sl = std::min(sub, K - s0);
    for (int j = 0; j < ncols; j += NR)
      for (int r0 = 0; r0 < rows; r0 += G) {
        const auto& fns = !strip ? plain : r0 == 0 ? write : read;
        fns[std::min(G, rows - r0) - 1](sl, a + r0 * lda + s0, lda, b + s0 * ldb + j, ldb,
                                        std::min(NR, ncols - j), sub, part + r0 * ldp + j, ldp,
                                        s0 > 0, c + r0 * ldc + j, ldc, s0 + sl == K, strip);
      }
  }
}

template <int G, int NV>
void run_rm(int rows, int64_t N, int64_t K, const bf16* a, int64_t lda, const bf16* b, int64_t ldb,
            const gemm::OutView& out, const gemm::Epilogue& ep) {
  detail::unp::run_chunks(rows, N, NV * 32, detail::unp::rm_cap(rows), out, ep,
                          [&](int64_t j, int ncols, float* c, int64_t ldc) {
                            alignas(64) float part[detail::unp::kRmAccFloats];
                            alignas(64) bf16 strip[kRmStripRows / 2 * NV * 64];
                            const detail::unp::RmSub rs = detail::unp::rm_sub(ncols, 2, ldb);
                            const bool use = rs.aliased && rows > G;
                            const int64_t sub = use ? kRmStripRows : rs.rows / 2 * 2;
                            rm_chunk<G, NV>(rows, K, sub, a, lda, b + j, ldb, ncols, part, c, ldc,
                                            use ? strip : nullptr);
                          });
}

void run_entry(const gemm::Params&, int64_t M, int64_t N, int64_t K, const bf16* a, int64_t lda,
               const gemm::MatView& b, const gemm::OutView& out, const gemm::Epilogue& ep) {
  const bf16* w = static_cast<const bf16*>(b.p);
  const int rows = static_cast<int>(M);
  if (b.rs == 1 && (b.cs != 1 || N == 1)) {
    if (M == 1) return run<1, kDotR1>(1, N, K, a, lda, w, b.cs, out, ep);
    return run<kDotG, kDotR>(rows, N, K, a, lda, w, b.cs, out, ep);
  }
  if (M == 1) return run_rm<1, kRmNv1>(1, N, K, a, lda, w, b.rs, out, ep);
  return run_rm<kRmG, kRmNv>(rows, N, K, a, lda, w, b.rs, out, ep);
}

}  // namespace dp
}  // namespace opsnn::simd::avx512::unpacked_dp

namespace opsnn::gemm {
UnpackedDpFn unpacked_dp_avx512bf16() { return &simd::avx512::unpacked_dp::dp::run_entry; }
}  // namespace opsnn::gemm

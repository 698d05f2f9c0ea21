// The small-M GEMM on unpacked weights (gemm_unpacked.h) written once over
// the vec_*.h names; included by gemm_unpacked_{scalar,avx2,avx512}.cc inside
// their ISA namespace, after the vec header. Expects the tile shapes
// kRmG, kRmNv (row-major B: G rows x NV vectors of accumulators; kRmNv1 for
// M = 1) and kDotG, kDotR (transposed B: G rows x R weight rows of vector
// accumulators; kDotR1 for M = 1).

namespace detail {

using gemm::Act;
using gemm::Epilogue;
using gemm::MatView;
using gemm::OutView;
using gemm::Params;

#include "kernels/gemm/epilogue_impl.h"

namespace unp {

inline constexpr int kMaxRows = static_cast<int>(gemm::kUnpackedMaxM);
// Software prefetch ahead of the weight stream: the rows of a row-major B
// tile are far apart (a page or more), which the hardware prefetchers do not
// follow, so ~8 KiB of the coming rows are requested per thread.
inline constexpr int64_t kRmPfBytes = 8192;
// Transposed B: each weight row is a sequential stream; 1 KiB ahead per row.
inline constexpr int64_t kDotPfBytes = 1024;
// Transposed B: K is walked in blocks of this many elements, so that the R
// weight rows' block stays in L1 while every row group of A uses it.
inline constexpr int64_t kDotKb = 512;
// Transposed B: output columns per epilogue call.
inline constexpr int kDotTile = 64;

// ---- row-major B (K x N, unit column stride) --------------------------------------
// G rows of C, columns [0, ncols) (<= NV*kLanes), over one K-block of kl:
// the packed decode kernel's FMA sequence (acc = a*b + acc per k, then
// c = acc or c += acc), so the same bits. Edge: masked B loads past ncols.
template <int G, int NV, bool Edge, class TB>
void rm_block(int64_t kl, const float* a, int64_t lda, const TB* b, int64_t ldb, int ncols,
              float* c, int64_t ldc, bool accumulate) {
  constexpr int64_t kRowBytes = NV * kLanes * static_cast<int64_t>(sizeof(TB));
  constexpr int64_t kPfRows = std::max<int64_t>(4, kRmPfBytes / kRowBytes);
  Vf acc[G][NV];
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = zero();
  for (int64_t k = 0; k < kl; ++k) {
    const TB* bk = b + k * ldb;
    Vf bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      if constexpr (Edge) {
        const int n = ncols - v * kLanes;
        bv[v] = n >= kLanes ? load(bk + v * kLanes) : n > 0 ? load_n(bk + v * kLanes, n) : zero();
      } else {
        bv[v] = load(bk + v * kLanes);
      }
    }
    {
      const char* pf = reinterpret_cast<const char*>(bk + kPfRows * ldb);
#pragma GCC unroll 8
      for (int64_t o = 0; o < kRowBytes; o += 64) __builtin_prefetch(pf + o, 0, 0);
    }
#pragma GCC unroll 16
    for (int i = 0; i < G; ++i) {
      const Vf av = set1(a[i * lda + k]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = fma(av, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const int n = ncols - v * kLanes;
      float* p = c + i * ldc + v * kLanes;
      if (n >= kLanes)
        store(p, accumulate ? load(p) + acc[i][v] : acc[i][v]);
      else if (n > 0)
        store_n(p, accumulate ? load_n(p, n) + acc[i][v] : acc[i][v], n);
    }
}

template <class TB>
using RmFn = void (*)(int64_t, const float*, int64_t, const TB*, int64_t, int, float*, int64_t,
                      bool);
template <int NV, bool Edge, class TB, int... Gs>
constexpr auto rm_table(std::integer_sequence<int, Gs...>) {
  return std::array<RmFn<TB>, sizeof...(Gs)>{&rm_block<Gs + 1, NV, Edge, TB>...};
}

// C tile [rows, ncols) = A·B[:, tile], K-blocks of kc (the packed path's),
// the rows in groups of G within a K-block (its B rows stay in L1/L2).
template <int G, int NV, class TB>
void rm_tile(int rows, int64_t K, int64_t kc, const float* a, int64_t lda, const TB* b, int64_t ldb,
             int ncols, float* c, int64_t ldc) {
  static constexpr auto full = rm_table<NV, false, TB>(std::make_integer_sequence<int, G>());
  static constexpr auto edge = rm_table<NV, true, TB>(std::make_integer_sequence<int, G>());
  const auto& fns = ncols == NV * kLanes ? full : edge;
  if (K == 0) {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < ncols; ++j) c[i * ldc + j] = 0.0f;
    return;
  }
  for (int64_t k0 = 0; k0 < K; k0 += kc) {
    const int64_t kl = std::min(kc, K - k0);
    for (int r0 = 0; r0 < rows; r0 += G) {
      const int g = std::min(G, rows - r0);
      fns[g - 1](kl, a + r0 * lda + k0, lda, b + k0 * ldb, ldb, ncols, c + r0 * ldc, ldc, k0 > 0);
    }
  }
}

// ---- transposed B (N x K, unit row stride: W[n, k] at w[n*ldw + k]) ---------------
// G rows of A against R weight rows over k in [k0, k0 + kl): vector partial
// sums in part[G][R] (lanes over k), loaded and stored around the span.
template <int G, int R, class TB>
void dot_span(int64_t k0, int64_t kl, const float* a, int64_t lda, const TB* const* w,
              Vf (*part)[R]) {
  constexpr int64_t kPf = kDotPfBytes / static_cast<int64_t>(sizeof(TB));
  Vf acc[G][R];
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[i][r] = part[i][r];
  const int64_t ke = k0 + kl;
  int64_t k = k0;
  for (; k + kLanes <= ke; k += kLanes) {
    Vf wv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      wv[r] = load(w[r] + k);
      __builtin_prefetch(w[r] + k + kPf, 0, 0);
    }
#pragma GCC unroll 16
    for (int i = 0; i < G; ++i) {
      const Vf av = load(a + i * lda + k);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[i][r] = fma(av, wv[r], acc[i][r]);
    }
  }
  if (k < ke) {
    const int n = static_cast<int>(ke - k);
    Vf wv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) wv[r] = load_n(w[r] + k, n);
#pragma GCC unroll 16
    for (int i = 0; i < G; ++i) {
      const Vf av = load_n(a + i * lda + k, n);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[i][r] = fma(av, wv[r], acc[i][r]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) part[i][r] = acc[i][r];
}

template <int R, class TB>
using DotFn = void (*)(int64_t, int64_t, const float*, int64_t, const TB* const*, Vf (*)[R]);
template <int R, class TB, int... Gs>
constexpr auto dot_table(std::integer_sequence<int, Gs...>) {
  return std::array<DotFn<R, TB>, sizeof...(Gs)>{&dot_span<Gs + 1, R, TB>...};
}

// C tile [rows, ncols) = A·W[tile rows]^T: R weight rows at a time, K in
// blocks of kDotKb shared by the row groups, the lanes summed at the end.
template <int G, int R, class TB>
void dot_tile(int rows, int64_t K, const float* a, int64_t lda, const TB* w, int64_t ldw, int ncols,
              float* c, int64_t ldc) {
  static constexpr auto fns = dot_table<R, TB>(std::make_integer_sequence<int, G>());
  for (int j0 = 0; j0 < ncols; j0 += R) {
    const TB* wr[R];
    // Past ncols, repeat a valid row (its sums are not stored).
    for (int r = 0; r < R; ++r) wr[r] = w + (j0 + r < ncols ? j0 + r : j0) * ldw;
    Vf part[kMaxRows][R];
    for (int i = 0; i < rows; ++i)
      for (int r = 0; r < R; ++r) part[i][r] = zero();
    for (int64_t k0 = 0; k0 < K; k0 += kDotKb) {
      const int64_t kl = std::min(kDotKb, K - k0);
      for (int r0 = 0; r0 < rows; r0 += G)
        fns[std::min(G, rows - r0) - 1](k0, kl, a + r0 * lda, lda, wr, part + r0);
    }
    for (int i = 0; i < rows; ++i)
      for (int r = 0; r < R && j0 + r < ncols; ++r) c[i * ldc + j0 + r] = reduce_add(part[i][r]);
  }
}

// ---- the drivers: output tiles over the threads, the epilogue per tile ------------
// tile(b_col, ncols, c, ldc) computes C's columns [b_col, b_col + ncols) of
// A·B into c. Gated: the gate tile and the value tile side by side (the
// packed gated panel's layout), then the gated epilogue.
template <int TW, class TileFn>
void run_tiles(int rows, int64_t N, const OutView& out, const Epilogue& ep, TileFn&& tile) {
  const int64_t H = ep.gated ? N / 2 : N;
  parallel_for(gemm::ceil_div(H, TW), 1, [&](int64_t t0, int64_t t1) {
    const StreamFence fence{out.stream};
    alignas(64) float c[kMaxRows * 2 * TW];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t j = t * TW;
      const int ncols = static_cast<int>(std::min<int64_t>(TW, H - j));
      if (ep.gated) {
        tile(j, ncols, c, 2 * TW);
        tile(H + j, ncols, c + TW, 2 * TW);
        epilogue_gated(ep, c, 2 * TW, rows, 2 * TW, 0, j, H, out);
      } else {
        tile(j, ncols, c, TW);
        epilogue_tile(ep, c, TW, rows, ncols, 0, j, out);
      }
    }
  });
}

template <int G, int NV, class TB>
void run_rm(const Params& p, int rows, int64_t N, int64_t K, const float* a, int64_t lda,
            const TB* b, int64_t ldb, const OutView& out, const Epilogue& ep) {
  const int64_t kc = gemm::even_kc(p.kc, K, 1);
  run_tiles<NV * kLanes>(rows, N, out, ep, [&](int64_t j, int ncols, float* c, int64_t ldc) {
    rm_tile<G, NV>(rows, K, kc, a, lda, b + j, ldb, ncols, c, ldc);
  });
}

template <int G, int R, class TB>
void run_dot(int rows, int64_t N, int64_t K, const float* a, int64_t lda, const TB* w, int64_t ldw,
             const OutView& out, const Epilogue& ep) {
  run_tiles<kDotTile>(rows, N, out, ep, [&](int64_t j, int ncols, float* c, int64_t ldc) {
    dot_tile<G, R>(rows, K, a, lda, w + j * ldw, ldw, ncols, c, ldc);
  });
}

template <class TB>
void run_t(const Params& p, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
           const MatView& bv, const OutView& out, const Epilogue& ep) {
  const TB* b = static_cast<const TB*>(bv.p);
  const int rows = static_cast<int>(M);
  // B [K, 1] has both strides 1: read it as one weight row.
  if (bv.rs == 1 && (bv.cs != 1 || N == 1)) {
    if (rows == 1) return run_dot<1, kDotR1>(rows, N, K, a, lda, b, bv.cs, out, ep);
    return run_dot<kDotG, kDotR>(rows, N, K, a, lda, b, bv.cs, out, ep);
  }
  if (rows == 1) return run_rm<1, kRmNv1>(p, rows, N, K, a, lda, b, bv.rs, out, ep);
  return run_rm<kRmG, kRmNv>(p, rows, N, K, a, lda, b, bv.rs, out, ep);
}

}  // namespace unp

inline void run_unpacked(const Params& p, int64_t M, int64_t N, int64_t K, const float* a,
                         int64_t lda, const MatView& b, const OutView& out, const Epilogue& ep) {
  switch (b.t) {
    case DType::bf16:
      return unp::run_t<bf16>(p, M, N, K, a, lda, b, out, ep);
    case DType::f16:
      return unp::run_t<f16>(p, M, N, K, a, lda, b, out, ep);
    default:
      return unp::run_t<float>(p, M, N, K, a, lda, b, out, ep);
  }
}

}  // namespace detail

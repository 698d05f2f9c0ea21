// bf16 x bf16 -> f32 GEMM with AVX512_BF16 (vdpbf16ps): B packed as k-pairs
// ([K/2][nr][2] bf16 per panel), A packed as k-pairs broadcast as 32 bits.
// Used for bf16 A and bf16 B when the CPU has AVX512_BF16.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/gemm/blocking.h"
#include "kernels/gemm/gemm.h"
#include "kernels/simd/vec_avx512.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512::bf16dot {
#define KERNEL_LIST(X) X(14, 2)
#include "kernels/gemm/gemm_impl.h"

using namespace detail;

constexpr int MR = 14, NV = 2, NR = NV * 16;
// Decode weight-stream prefetch distance in k-pairs (128 B each).
constexpr int kPfPairs = 32;

// The last K-block of a trivial epilogue with a bf16 output: the sums (plus c
// when accumulating) converted by vcvtneps2bf16 (round to nearest even, one
// instruction instead of the seven of the portable rounding; 3-5% of
// 4096x320x320) into the output rows ob (stride ldo), whole aligned vectors
// non-temporally when `stream`. Unlike the portable rounding it flushes an f32
// denormal to a signed zero; only c + sums can be one (vdpbf16ps flushes its
// own results).
template <int R>
[[gnu::always_inline]] inline void store_bf16_out(const __m512 (&acc)[R][NV], const float* c,
                                                  int64_t ldc, int ncols, bool accumulate, bf16* ob,
                                                  int64_t ldo, bool stream) {
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const int n = ncols - v * 16;
      if (n <= 0) continue;
      const __mmask16 m = n >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << n) - 1u);
      __m512 y = acc[i][v];
      if (accumulate) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(m, c + i * ldc + v * 16));
      const __m256i h = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(y));
      bf16* o = ob + i * ldo + v * 16;
      if (n < 16)
        _mm256_mask_storeu_epi16(o, m, h);
      else if (stream && reinterpret_cast<uintptr_t>(o) % 32 == 0)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(o), h);
      else
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), h);
    }
}

// ob != nullptr: the result goes to the bf16 output rows ob (store_bf16_out)
// instead of c.
template <int R>
void ukr_dp(int64_t kp, const uint32_t* a, const uint16_t* b, float* c, int64_t ldc, int ncols,
            bool accumulate, bf16* ob, int64_t ldo, bool stream_ob) {
  __m512 acc[R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    // The C rows are read (accumulate) or written at the end: start their
    // cache lines' way in now, behind the K loop.
    __builtin_prefetch(c + i * ldc, 1, 3);
    __builtin_prefetch(c + i * ldc + 16, 1, 3);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  }
#pragma GCC unroll 2
  for (int64_t k = 0; k < kp; ++k) {
    __m512i bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_si512(b + (k * NR + v * 16) * 2);
    if constexpr (R <= 8) {  // decode: the weight stream, ~4 KiB ahead
      __builtin_prefetch(b + (k + kPfPairs) * NR * 2, 0, kPfLocality);
      __builtin_prefetch(b + (k + kPfPairs) * NR * 2 + 32, 0, kPfLocality);
    } else {
      // Both 64-byte lines of the k-pair row 8 ahead (a row is NR * 2 bf16).
      __builtin_prefetch(b + (k + 8) * NR * 2, 0, 3);
      __builtin_prefetch(b + (k + 8) * NR * 2 + 32, 0, 3);
    }
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const __m512i av = _mm512_set1_epi32(static_cast<int>(a[k * MR + i]));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[i][v] = _mm512_dpbf16_ps(acc[i][v], reinterpret_cast<__m512bh>(av),
                                     reinterpret_cast<__m512bh>(bv[v]));
    }
  }
  if (ob)
    store_bf16_out(acc, c, ldc, ncols, accumulate, ob, ldo, stream_ob);
  else
    store_acc(acc, c, ldc, ncols, accumulate);
}

// The decode kernel (M <= MR): R x 32 columns, A pair (i, k) read as 32 bits
// at a + k*a_ks + i*a_rs (uint16 units: the packed pairs, or a row-major bf16
// A in place) and folded into vdpbf16ps as an embedded broadcast (m32{1to16}):
// per k-pair 2 loads and 2R dot products, no broadcast instructions, so the
// out-of-order window reaches further down the weight stream. Same products
// in the same order as ukr_dp: the same bits.
template <int R>
void ukr_dp_eb(int64_t kp, const uint16_t* a, int64_t a_ks, int64_t a_rs, const uint16_t* b,
               float* c, int64_t ldc, int ncols, bool accumulate) {
  __m512 acc[R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    __builtin_prefetch(c + i * ldc, 1, 3);
    __builtin_prefetch(c + i * ldc + 16, 1, 3);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  }
#pragma GCC unroll 2
  for (int64_t k = 0; k < kp; ++k) {
    __m512i bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_si512(b + (k * NR + v * 16) * 2);
    // The weight stream, ~4 KiB ahead, both lines of the k-pair row (NR * 2
    // uint16 = 128 B; the old kernel's "+ 32) * 2" fetched the next row's
    // first line instead, so half the stream went unprefetched).
    for (int v = 0; v < NV; ++v)
      __builtin_prefetch(b + (k + kPfPairs) * NR * 2 + v * 32, 0, kPfLocality);
    const uint16_t* ak = a + k * a_ks;
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const uint32_t* ai = reinterpret_cast<const uint32_t*>(ak + i * a_rs);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        asm("vdpbf16ps %[a]%{1to16%}, %[b], %[c]"
            : [c] "+v"(acc[i][v])
            : [b] "v"(bv[v]), [a] "m"(*ai));
    }
  }
  store_acc(acc, c, ldc, ncols, accumulate);
}

using EbFn = void (*)(int64_t, const uint16_t*, int64_t, int64_t, const uint16_t*, float*, int64_t,
                      int, bool);
template <int... Ms>
constexpr auto eb_table(std::integer_sequence<int, Ms...>) {
  return std::array<EbFn, sizeof...(Ms)>{&ukr_dp_eb<Ms + 1>...};
}

using DpFn = void (*)(int64_t, const uint32_t*, const uint16_t*, float*, int64_t, int, bool, bf16*,
                      int64_t, bool);
template <int... Ms>
constexpr auto dp_table(std::integer_sequence<int, Ms...>) {
  return std::array<DpFn, sizeof...(Ms)>{&ukr_dp<Ms + 1>...};
}

inline uint16_t bf16_of(const MatView& v, int64_t i, int64_t j) {
  if (v.t == DType::bf16) return static_cast<const bf16*>(v.p)[i * v.rs + j * v.cs].bits;
  return f32_to_bf16_bits(view_at(v, i, j));
}

// One panel's K-block [k0, k0 + kl) of a bf16 B as the caller holds it
// (row-major or transposed) into k-pair rows at dst, as pack_b_pairs lays
// out a whole panel: the staged driver below packs B as it is consumed.
void pack_panel_block(const MatView& b, int64_t K, int64_t N, int64_t pnl, int64_t k0, int64_t kl,
                      uint16_t* dst) {
  const int64_t kp = (kl + 1) / 2, n0 = pnl * NR;
  const bool whole = n0 + NR <= N;
  const bf16* src = static_cast<const bf16*>(b.p);
  if (whole && b.cs == 1) {  // row-major: rows k, k + 1 interleaved by word permutes
    alignas(64) static constexpr uint16_t kPairIdx[32] = {
        0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
        8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i lo = _mm512_load_si512(kPairIdx);
    const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
    for (int64_t q = 0; q < kp; ++q) {
      const int64_t k = k0 + 2 * q;
      const __m512i r0 = _mm512_loadu_si512(src + k * b.rs + n0);
      const __m512i r1 =
          k + 1 < K ? _mm512_loadu_si512(src + (k + 1) * b.rs + n0) : _mm512_setzero_si512();
      _mm512_storeu_si512(dst + q * NR * 2, _mm512_permutex2var_epi16(r0, lo, r1));
      _mm512_storeu_si512(dst + q * NR * 2 + 32, _mm512_permutex2var_epi16(r0, hi, r1));
    }
    return;
  }
  int64_t q0 = 0;
  if (whole && b.rs == 1) {  // transposed: a 32-bit transpose of 16 pairs at a time
    const float* cols[NR];
    for (int j = 0; j < NR; ++j)
      cols[j] = reinterpret_cast<const float*>(src + (n0 + j) * b.cs + k0);
    float* d32 = reinterpret_cast<float*>(dst);
    for (; q0 + 16 <= kl / 2; q0 += 16) {
      transpose_cols16<16>(cols, q0, d32 + q0 * NR, NR);
      transpose_cols16<16>(cols + 16, q0, d32 + q0 * NR + 16, NR);
    }
  }
  for (int64_t k = 2 * q0; k < kp * 2; ++k)
    for (int j = 0; j < NR; ++j)
      dst[((k / 2) * NR + j) * 2 + (k & 1)] =
          k0 + k < K && n0 + j < N ? src[(k0 + k) * b.rs + (n0 + j) * b.cs].bits : uint16_t{0};
}

void pack_b_pairs(int64_t K, int64_t N, const MatView& b, uint16_t* dst, bool gated) {
  const int64_t kp = (K + 1) / 2, npan = packed_panels(N, NR, gated);
  parallel_for(npan, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t pnl = p0; pnl < p1; ++pnl) {
      uint16_t* d = dst + pnl * kp * NR * 2;
      // A bf16 B by word permutes of row pairs (row-major) or 32-bit
      // register transposes (transposed, a `linear` weight): the per-element
      // copy below made the op form's per-call packing ~10x its GEMM at
      // M = 64, and bf16 `linear` at 64x4096x4096 take 5x its GEMM.
      if (!gated && b.t == DType::bf16 && (b.cs == 1 || b.rs == 1)) {
        pack_panel_block(b, K, N, pnl, 0, K, d);
        continue;
      }
      int64_t col[NR];
      for (int j = 0; j < NR; ++j) col[j] = packed_col(pnl, j, NR, N, gated);
      for (int64_t k = 0; k < kp * 2; ++k)
        for (int j = 0; j < NR; ++j)
          d[((k / 2) * NR + j) * 2 + (k & 1)] =
              (k < K && col[j] >= 0) ? bf16_of(b, k, col[j]) : uint16_t{0};
    }
  });
}

void pack_a_pairs(const MatView& a, int64_t m0, int64_t mlen, int64_t k0, int64_t kl,
                  uint16_t* dst) {
  const int64_t kp = (kl + 1) / 2;
  for (int64_t r0 = 0; r0 < mlen; r0 += MR) {
    uint16_t* d = dst + r0 * kp * 2;
    const int rows = static_cast<int>(std::min<int64_t>(MR, mlen - r0));
    if (rows == MR && a.t == DType::bf16 && a.cs == 1 && kl >= 32) {
      // Whole pairs are 32-bit words: 16 pair-columns of the MR rows at a time
      // are a 32-bit transpose; the rest (and an odd tail) below.
      const float* sr[MR];
      for (int i = 0; i < MR; ++i)
        sr[i] = reinterpret_cast<const float*>(static_cast<const bf16*>(a.p) +
                                               (m0 + r0 + i) * a.rs + k0);
      const int64_t full = kl / 2 / 16 * 16;
      float* d32 = reinterpret_cast<float*>(d);
      for (int64_t q = 0; q < full; q += 16) transpose_cols16<MR>(sr, q, d32 + q * MR);
      for (int i = 0; i < MR; ++i) {
        const bf16* s = static_cast<const bf16*>(a.p) + (m0 + r0 + i) * a.rs + k0;
        for (int64_t k = 2 * full; k < kl; ++k) d[((k / 2) * MR + i) * 2 + (k & 1)] = s[k].bits;
        if (kl & 1) d[((kl / 2) * MR + i) * 2 + 1] = 0;
      }
      continue;
    }
    for (int i = 0; i < rows; ++i) {
      const int64_t row = m0 + r0 + i;
      if (a.t == DType::bf16 && a.cs == 1) {
        // Whole pairs as 32-bit words; an odd tail below.
        const bf16* s = static_cast<const bf16*>(a.p) + row * a.rs + k0;
        uint32_t* d32 = reinterpret_cast<uint32_t*>(d);
        const int64_t full = kl / 2;
        for (int64_t q = 0; q < full; ++q) {
          uint32_t w;
          std::memcpy(&w, s + 2 * q, 4);
          d32[q * MR + i] = w;
        }
        if (kl & 1) d[(full * MR + i) * 2] = s[kl - 1].bits;
      } else {
        for (int64_t k = 0; k < kl; ++k)
          d[((k / 2) * MR + i) * 2 + (k & 1)] = bf16_of(a, row, k0 + k);
      }
      if (kl & 1) d[((kl / 2) * MR + i) * 2 + 1] = 0;
    }
  }
}

// Decode (M <= MR): a row-major bf16 A with even K is read in place (pairs of
// a row are 32-bit words); otherwise its one row panel is packed into pairs
// once for all of K. Each task streams whole B panels (all K-blocks in order,
// the C rows stay in L1), or (panel, K-block) pairs with split-K when N has
// few panels. Same K-blocks and A rounding as the blocked path: the same bits.
void run_dp_small_m(const Scratch& sc, int64_t M, int64_t N, int64_t K, int64_t kc,
                    const MatView& a, const uint16_t* pb, const OutView& out, const Epilogue& ep,
                    int64_t Nfull) {
  static constexpr auto table = eb_table(std::make_integer_sequence<int, MR>());
  const int rows = static_cast<int>(M);
  const int64_t kpt = (K + 1) / 2, npan = ceil_div(N, NR), nkb = ceil_div(K, kc);
  const uint16_t* a16;
  int64_t a_ks, a_rs;
  if (a.t == DType::bf16 && a.cs == 1 && K % 2 == 0) {
    // In place: pair k of row i at a + i*rs + 2k (an odd K would need the
    // zero the packing appends to the last pair).
    a16 = reinterpret_cast<const uint16_t*>(static_cast<const bf16*>(a.p));
    a_ks = 2;
    a_rs = a.rs;
  } else {
    uint16_t* abuf = reinterpret_cast<uint16_t*>(sc.pairs(static_cast<size_t>(MR * kpt + 16)));
    pack_a_pairs(a, 0, M, 0, K, abuf);
    a16 = abuf;
    a_ks = 2 * MR;
    a_rs = 2;
  }
  const int64_t threads = sc.threads;
  if (use_split_k(npan, nkb, threads))
    return run_split_k(sc, rows, N, K, kc, NR, ep, Nfull, out,
                       [&](int64_t pnl, int64_t k0, int64_t kl, float* dst) {
                         table[rows - 1]((kl + 1) / 2, a16 + (k0 / 2) * a_ks, a_ks, a_rs,
                                         pb + (pnl * kpt + k0 / 2) * NR * 2, dst, NR, NR, false);
                       });
  const Grid g = make_grid(M, N, MR, NR, MR, NR, threads, true);
  const bool direct_c = out.t == DType::f32 && !ep.gated;
  parallel_tasks(
      g.nnb,
      [&](int64_t nb) {
        const StreamFence fence{out.stream};
        const int64_t n0 = nb * g.nc, nlen = std::min(g.nc, N - n0);
        for (int64_t jp = n0; jp < n0 + nlen; jp += NR) {
          const int ncols = static_cast<int>(std::min<int64_t>(NR, N - jp));
          float* ct;
          int64_t ldc;
          if (direct_c) {
            ct = static_cast<float*>(out.p) + jp;
            ldc = out.ld;
          } else {
            ct = sc.c(static_cast<size_t>(rows * NR));
            ldc = NR;
          }
          const uint16_t* bp = pb + (jp / NR) * kpt * NR * 2;
          for (int64_t k0 = 0; k0 < K; k0 += kc) {
            const int64_t kl = std::min(kc, K - k0);
            table[rows - 1]((kl + 1) / 2, a16 + (k0 / 2) * a_ks, a_ks, a_rs, bp + (k0 / 2) * NR * 2,
                            ct, ldc, ncols, k0 > 0);
          }
          finish_tile(ep, ct, ldc, rows, ncols, 0, jp, NR, Nfull, out);
        }
      },
      sc.threads);
}

// The blocked driver's microkernel policy: A packed into k-pairs
// (pack_a_pairs), B panels of kpt k-pairs (kpt*NR*2 bf16 each), ukr_dp per
// row count. On the last K-block of a fused bf16 output the kernel writes the
// output rows itself.
struct DpUkr {
  static constexpr int MR = bf16dot::MR, NR = bf16dot::NR;
  static constexpr double kMacsPerCycle = 64.0;
  static constexpr auto table = dp_table(std::make_integer_sequence<int, MR>());
  const uint16_t* pb;
  int64_t kpt;  // k-pairs in a panel
  const OutView& out;
  bool fused_bf16;

  // bf16 pairs: rows * kc bf16 = rows * kc / 2 floats of scratch.
  static size_t a_floats(int64_t rows, int64_t kc) {
    return static_cast<size_t>(rows * kc / 2 + 16);
  }
  static void pack_a_block(const MatView& a, int64_t m0, int64_t mlen, int64_t k0, int64_t kl,
                           float* abuf) {
    pack_a_pairs(a, m0, mlen, k0, kl, reinterpret_cast<uint16_t*>(abuf));
  }
  const uint16_t* b_panel(int64_t pnl, int64_t k0) const {
    return pb + (pnl * kpt + k0 / 2) * NR * 2;
  }
  static int64_t b_panel_bytes(int64_t kl) { return (kl + 1) / 2 * NR * 4; }
  static size_t stage_floats(int64_t) { return 0; }
  const uint16_t* stage_b(int64_t pnl, int64_t k0, int64_t, float*) const {
    return b_panel(pnl, k0);
  }
  void prefetch_share(int64_t pnl, int64_t k0, int64_t kl, int64_t q, int64_t n) const {
    prefetch_lines_share(b_panel(pnl, k0), b_panel_bytes(kl), q, n);
  }
  bool kernel(int rows, int64_t kl, const float* abuf, int64_t ir, const uint16_t* bp, float* c,
              int64_t ldc, int ncols, bool accumulate, bool last, int64_t i0, int64_t jp) const {
    const int64_t kp = (kl + 1) / 2;
    bf16* ob = last && fused_bf16 ? static_cast<bf16*>(out.p) + i0 * out.ld + jp : nullptr;
    table[rows - 1](
        kp,
        reinterpret_cast<const uint32_t*>(reinterpret_cast<const uint16_t*>(abuf) + ir * kp * 2),
        bp, c, ldc, ncols, accumulate, ob, out.ld, out.stream);
    return ob != nullptr;
  }
};

// The staged policy (op form above kUnpackedMaxM rows): B read as the caller
// holds it, each panel's K-block packed into k-pairs in the task's scratch
// when the task reaches it and used there by all the task's row panels,
// instead of the whole B packed per call into the workspace and read back.
struct DpStagedUkr : DpUkr {
  MatView b;
  int64_t K = 0, N = 0;
  static size_t stage_floats(int64_t kc) { return static_cast<size_t>((kc + 1) / 2 * NR); }
  const uint16_t* stage_b(int64_t pnl, int64_t k0, int64_t kl, float* stage) const {
    auto* d = reinterpret_cast<uint16_t*>(stage);
    pack_panel_block(b, K, N, pnl, k0, kl, d);
    return d;
  }
  void prefetch_share(int64_t, int64_t, int64_t, int64_t, int64_t) const {}
};

void run_dp(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a, const uint16_t* pb,
            const OutView& out, const Epilogue& ep, const gemm::Workspace& ws) {
  if (M <= 0 || N <= 0) return;
  const Scratch sc(ws, p, M, N, K, out, ep.gated);
  const int64_t Nfull = N;
  if (ep.gated) N = packed_panels(Nfull, NR, true) * NR;
  const int64_t kc = gemm::bf16dot_kc(p, K);
  if (M <= MR && K > 0) return run_dp_small_m(sc, M, N, K, kc, a, pb, out, ep, Nfull);
  const bool direct_c = out.t == DType::f32 && !ep.gated && !c_stride_aliases(out.ld);
  // bf16 output, nothing to apply: the kernel converts on its last K-block.
  const bool fused_bf16 = out.t == DType::bf16 && !ep.gated && ep.trivial();
  run_blocked(DpUkr{pb, (K + 1) / 2, out, fused_bf16}, p, sc, M, N, Nfull, K, kc, a, out, ep,
              direct_c);
}

void run_dp_staged(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a,
                   const MatView& b, const OutView& out, const Epilogue& ep,
                   const gemm::Workspace& ws) {
  if (M <= 0 || N <= 0) return;
  const Scratch sc(ws, p, M, N, K, out, false);
  const int64_t kc = gemm::bf16dot_kc(p, K);
  const bool direct_c = out.t == DType::f32 && !c_stride_aliases(out.ld);
  const bool fused_bf16 = out.t == DType::bf16 && ep.trivial();
  DpStagedUkr u{{nullptr, (K + 1) / 2, out, fused_bf16}, b, K, N};
  run_blocked(u, p, sc, M, N, N, K, kc, a, out, ep, direct_c);
}

}  // namespace opsnn::simd::avx512::bf16dot

namespace opsnn::gemm {
void bf16dot_run_staged(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a,
                        const MatView& b, const OutView& c, const Epilogue& ep,
                        const Workspace& ws) {
  simd::avx512::bf16dot::run_dp_staged(p, M, N, K, a, b, c, ep, ws);
}
int64_t bf16dot_kc(const Params& p, int64_t K) {
  const int64_t kc2 = std::max<int64_t>(p.kc, 1) * 2;
  return std::max<int64_t>(K <= kc2 * 3 / 2 ? (K + 1) / 2 * 2 : even_kc(kc2, K, 2), 2);
}
int64_t bf16dot_packed_elems(int64_t K, int64_t N) {
  return (N + 31) / 32 * 32 * ((K + 1) / 2 * 2);
}
void bf16dot_pack_b(int64_t K, int64_t N, const MatView& b, void* dst, bool gated) {
  simd::avx512::bf16dot::pack_b_pairs(K, N, b, static_cast<uint16_t*>(dst), gated);
}
void bf16dot_run(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a, const void* pb,
                 const OutView& c, const Epilogue& ep, const Workspace& ws) {
  simd::avx512::bf16dot::run_dp(p, M, N, K, a, static_cast<const uint16_t*>(pb), c, ep, ws);
}

namespace {
// Seconds for `steps` rounds of 12 independent chains of the instruction
// `op` (throughput-bound: 12 chains cover its latency), best of 5. The
// chains are named variables so that they stay in registers.
template <class Op>
double time_chains(int steps, Op op) {
  alignas(64) static volatile float seed[16] = {};
  const __m512 x = _mm512_loadu_ps(const_cast<const float*>(seed));
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    // Distinct starting values, or the compiler merges the identical chains.
    const auto v = [&](float k) { return _mm512_add_ps(x, _mm512_set1_ps(k)); };
    __m512 a0 = v(0), a1 = v(1), a2 = v(2), a3 = v(3), a4 = v(4), a5 = v(5), a6 = v(6), a7 = v(7),
           a8 = v(8), a9 = v(9), a10 = v(10), a11 = v(11);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) {
      a0 = op(a0, x), a1 = op(a1, x), a2 = op(a2, x), a3 = op(a3, x);
      a4 = op(a4, x), a5 = op(a5, x), a6 = op(a6, x), a7 = op(a7, x);
      a8 = op(a8, x), a9 = op(a9, x), a10 = op(a10, x), a11 = op(a11, x);
    }
    const auto t1 = std::chrono::steady_clock::now();
    const __m512 s =
        _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                    _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))),
                      _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    seed[0] = _mm512_reduce_add_ps(s);  // keeps the chains alive
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}
}  // namespace

double bf16dot_mac_rate_over_fma() {
  constexpr int kSteps = 4096;  // 48K instructions per timing, ~10-40 us
  const double dot = time_chains(kSteps, [](__m512 acc, __m512 x) {
    return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh&>(x), reinterpret_cast<__m512bh&>(x));
  });
  const double fma =
      time_chains(kSteps, [](__m512 acc, __m512 x) { return _mm512_fmadd_ps(x, x, acc); });
  // MACs per instruction: 32 (16 lanes x a pair) against 16.
  return (32.0 / dot) / (16.0 / fma);
}
}  // namespace opsnn::gemm

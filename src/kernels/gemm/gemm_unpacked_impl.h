// The small-M GEMM on unpacked weights (gemm_unpacked.h) written once over
// the vec_*.h names; included by gemm_unpacked_{scalar,avx2,avx512}.cc inside
// their ISA namespace, after the vec header. Expects the tile shapes
// kRmG, kRmNv (row-major B: G rows x NV vectors of accumulators; kRmNv1 for
// M = 1) and kDotG, kDotR (transposed B: G rows x R weight rows of vector
// accumulators; kDotR1 for M = 1), kDotPairs (bf16 weight rows read in pairs,
// A in pair order: must match run_unpacked's choice for the ISA).

namespace detail {

using gemm::Act;
using gemm::Epilogue;
using gemm::MatView;
using gemm::OutView;
using gemm::Params;

#include "kernels/gemm/epilogue_impl.h"

namespace unp {

inline constexpr int kMaxRows = static_cast<int>(gemm::kUnpackedMaxM);
// Row-major B: a chunk of W columns is walked row by row (each row's W
// elements contiguous, a sequential stream the prefetchers follow), its
// rows x W partial sums in L1/L2 (kRmAccFloats, on the stack with the
// chunk's output tile: 96 KiB, 144 at AVX2); the rows in sub-blocks of about
// kRmSubBytes of B, the next sub-block prefetched into L2 meanwhile (into L1
// the prefetched rows, a page or more apart, map to the same few sets and
// evict each other).
// At AVX2 48 KiB of partial sums instead of 32: wider chunks, longer runs of
// each B row. Zen 3, f32 `matmul` on a plain B, 2 threads, alternated call
// by call, op form / packed (min, median): 8x4096x4096 0.62 / 0.65 -> 0.74 /
// 0.76 (chunks of 696 -> 1032 columns), 8x11008x4096 0.82 / 0.73 -> 0.86 /
// 0.85; M = 4, 12, 16 and bf16 within the noise. Chunks narrower than about
// 1000 columns were slower at every M (M = 2: 512 columns 0.58 against 1.0).
// AVX-512 (kLanes 16) keeps 32 KiB, as measured there.
inline constexpr int64_t kRmAccFloats = kLanes == 8 ? 12288 : 8192;
inline constexpr int64_t kRmSubBytes = 65536;
// Transposed B: each weight row is a sequential stream, prefetched 1 KiB
// ahead; f32 rows 512 B where prefetcht1 fills L1 (AMD up to Zen 3: the
// lines ahead of R rows share L1 with the K-block of A). Zen 3, 2 threads,
// alternated call by call: f32 `linear` 1x11008x4096 6-12% faster at 512 B
// than at 1 KiB, 8 and 16 rows 2-3%; bf16 1x4096x4096 5-10% slower at 512 B.
inline constexpr int64_t kDotPfBytes = 1024;
template <class TB>
inline int64_t dot_pf_elems() {
  const bool short_f32 = sizeof(TB) == 4 && cpu_info().prefetch_t1_fills_l1;
  return (short_f32 ? kDotPfBytes / 2 : kDotPfBytes) / static_cast<int64_t>(sizeof(TB));
}
// Transposed B: K is walked in blocks of this many elements, so that the R
// weight rows' block stays in L1 while every row group of A uses it.
inline constexpr int64_t kDotKb = 512;
// Transposed B: output columns per epilogue call, whole groups of kDotR
// (and kDotR1) weight rows.
inline constexpr int kDotTile = 16 * kDotR;
static_assert(kDotTile % kDotR1 == 0);

// ---- row-major B (K x N, unit column stride) --------------------------------------
// bf16 on the vector ISAs: one load and vpunpck{l,h}wd per two vectors
// (load_bf16_pair), on the shuffle port, where the widen + shift of a plain
// bf16 load puts the shift on an FMA port; the sums of such a pair are in
// the unpack order, put back in column order when they reach c.
template <class TB>
inline constexpr bool kRmPairs = std::is_same_v<TB, bf16> ? kBf16PanelPairs : false;

// One row of B into bv: vectors [0, P) in pairs (load_bf16_pair's order),
// the rest plain. Edge: only the first ncols columns are read.
template <int NV, int P, bool Edge, class TB>
__attribute__((always_inline)) inline void rm_load_row(const TB* bk, int ncols, Vf (&bv)[NV]) {
  if constexpr (P > 0) {
#pragma GCC unroll 8
    for (int v = 0; v < P; v += 2) {
      const int n = Edge ? ncols - v * kLanes : 2 * kLanes;
      if (n >= 2 * kLanes) {
        load_bf16_pair(bk + v * kLanes, bv[v], bv[v + 1]);
      } else {
        alignas(64) bf16 buf[2 * kLanes] = {};
        if (n > 0) std::memcpy(buf, bk + v * kLanes, sizeof(bf16) * static_cast<size_t>(n));
        load_bf16_pair(buf, bv[v], bv[v + 1]);
      }
    }
  }
#pragma GCC unroll 8
  for (int v = P; v < NV; ++v) {
    if constexpr (Edge) {
      const int n = ncols - v * kLanes;
      bv[v] = n >= kLanes ? load(bk + v * kLanes) : n > 0 ? load_n(bk + v * kLanes, n) : zero();
    } else {
      bv[v] = load(bk + v * kLanes);
    }
  }
}

// G rows x [0, ncols) (<= NV*kLanes) over kl rows of B: the packed decode
// kernel's FMA sequence (acc = a*b + acc per k), continued across calls
// through `part` (resume: start from part, else from 0). finish: 0 stores
// the sums to part; 1 and 2 end the K-block as the packed kernel does,
// c = acc (1) or c = c + acc (2): the same bits. Edge: masked B loads.
// Prefetches the tile's width of each row at pf_off elements past it (the
// next sub-block, rm_sub_block; none when 0).
// Strip: kNoStrip reads B; kSaveStrip also keeps the rows' vectors (as
// loaded, converted to f32) in `strip` (kl x NV*kLanes floats), and
// kFromStrip reads them from there instead of B, for the tile's other row
// groups (see rm_sub_block).
enum RmStrip { kNoStrip, kSaveStrip, kFromStrip };
template <int G, int NV, bool Edge, class TB, RmStrip Strip = kNoStrip>
__attribute__((always_inline)) inline void rm_block(int64_t kl, const float* a, int64_t lda,
                                                    const TB* b, int64_t ldb, int ncols,
                                                    int64_t pf_off, float* part, int64_t ldp,
                                                    bool resume, float* c, int64_t ldc, int finish,
                                                    float* strip) {
  constexpr int NR = NV * kLanes;
  constexpr int64_t kRowBytes = NV * kLanes * static_cast<int64_t>(sizeof(TB));
  constexpr int kPaired = kRmPairs<TB> ? NV / 2 * 2 : 0;  // vectors loaded in pairs
  Vf acc[G][NV];
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = resume ? load(part + i * ldp + v * kLanes) : zero();
  for (int64_t k = 0; k < kl; ++k) {
    Vf bv[NV];
    if constexpr (Strip == kFromStrip) {
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) bv[v] = load(strip + k * NR + v * kLanes);
    } else {
      const TB* bk = b + k * ldb;
      rm_load_row<NV, kPaired, Edge>(bk, ncols, bv);
      if (pf_off != 0) {
        const char* pf = reinterpret_cast<const char*>(bk + pf_off);
#pragma GCC unroll 8
        for (int64_t o = 0; o < kRowBytes; o += 64) __builtin_prefetch(pf + o, 0, 2);
      }
      if constexpr (Strip == kSaveStrip)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) store(strip + k * NR + v * kLanes, bv[v]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < G; ++i) {
      const Vf av = set1(a[i * lda + k]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = fma(av, bv[v], acc[i][v]);
    }
  }
  // Whole vectors of part (it is NV*kLanes wide, in the loads' order); c
  // only to ncols, in column order.
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i) {
    if (finish == 0) {
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) store(part + i * ldp + v * kLanes, acc[i][v]);
      continue;
    }
    if constexpr (kPaired > 0)
#pragma GCC unroll 8
      for (int v = 0; v < kPaired; v += 2) unswizzle_pair(acc[i][v], acc[i][v + 1]);
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const int n = ncols - v * kLanes;
      float* p = c + i * ldc + v * kLanes;
      if (n >= kLanes)
        store(p, finish == 2 ? load(p) + acc[i][v] : acc[i][v]);
      else if (n > 0)
        store_n(p, finish == 2 ? load_n(p, n) + acc[i][v] : acc[i][v], n);
    }
  }
}

template <class TB>
using RmFn = void (*)(int64_t, const float*, int64_t, const TB*, int64_t, int, int64_t, float*,
                      int64_t, bool, float*, int64_t, int, float*);
template <int NV, bool Edge, class TB, RmStrip Strip, int... Gs>
constexpr auto rm_table(std::integer_sequence<int, Gs...>) {
  return std::array<RmFn<TB>, sizeof...(Gs)>{&rm_block<Gs + 1, NV, Edge, TB, Strip>...};
}
template <int G, int NV, bool Edge, class TB, RmStrip Strip>
inline constexpr auto kRmTable =
    rm_table<NV, Edge, TB, Strip>(std::make_integer_sequence<int, G>());

// Rows of B per sub-block at most (the strip buffer's rows).
inline constexpr int64_t kRmMaxSub = 64;

// Rows of B per sub-block: about kRmSubBytes of the chunk's columns, and at
// most the L1's ways for each set the rows' lines map to: a tile's strip is
// read from L1 by the second row group and the next tile only if it stayed
// there. With a row stride of a multiple of 4 KiB (N = 4096 of bf16 or f32)
// every row of a strip falls in one set (`aliased`): 64 rows evicted each
// other, and bf16 8x4096x4096 ran at 0.72 of the packed time (AVX2),
// 0.80-0.87 at 12.
struct RmSub {
  int64_t rows;
  bool aliased;  // the ways bound applies
};
inline RmSub rm_sub(int64_t ncols, int64_t elem_bytes, int64_t ldb) {
  const int64_t sub = std::clamp<int64_t>(kRmSubBytes / (ncols * elem_bytes), 2, kRmMaxSub);
  const CpuInfo& ci = cpu_info();
  const int64_t ways = std::max(ci.l1d_ways, 2);
  const int64_t sets = std::max<int64_t>(static_cast<int64_t>(ci.l1d_bytes) / (64 * ways), 1);
  const int64_t period = sets / std::gcd(ldb * elem_bytes / 64 % sets, sets);
  return {std::min(sub, ways * period), ways * period < sub};
}

// How the row groups after the first get a tile's strip, and whether the
// next sub-block is prefetched; measured on Zen 3 (AVX2, 2026-12-07, the
// variants alternated call by call in one process):
// * bf16: from the strip buffer (rm_sub_block), in f32 as the first group
//   converted it: 8x4000x4096 from DRAM, 2 threads, 4.1 -> 3.1 ms,
//   8x11008x4096 11.8 -> 9.1, 8x4096x4096 5.6 -> 4.4. f16 (a cheaper
//   conversion) and f32 gain nothing from it where B's rows do not alias
//   (f32 16x4000x4096 5.8 -> 7.4 ms).
// * f32 and f16 with aliased rows: the buffer for 3 or more groups
//   (f32 16x4096x1024 in L3, 1 thread, 3.2 -> 2.9 ms), B read again from
//   L1 for 2 (8x4096x512 0.61 ms against 0.70 with the buffer).
// * Where prefetcht1 fills L1 (cpu.h) and the next group reads a tile's
//   strip again from L1 where rows alias, the prefetch evicts some of it,
//   even two tiles behind (rm_sub_block): f32 8x4096x512 in L3, 1 thread,
//   0.60 ms without, 0.62-0.72 with it (0.90 when it was at the same
//   columns); from DRAM 8x4096x4096 0.62 -> 0.65 of the packed time with
//   it. Off there (decode weights in L3 stay fast); on everywhere else.
struct RmPlan {
  RmSub sub;
  bool strip, prefetch;
};
template <class TB>
RmPlan rm_plan(int rows, int G, int64_t ncols, int64_t ldb) {
  const RmSub sub = rm_sub(ncols, static_cast<int64_t>(sizeof(TB)), ldb);
  const bool strip = rows > G && (std::is_same_v<TB, bf16> || (sub.aliased && rows > 2 * G));
  const bool rereads = rows > G && !strip;
  return {sub, strip, !(cpu_info().prefetch_t1_fills_l1 && sub.aliased && rereads)};
}

// One sub-block (sl rows of B) over the chunk's tiles, each tile's row
// groups in turn: the tile's strip of B comes from memory for the first
// group and from L1 for the others, or, with use_strip (rm_plan), from a
// buffer the first group fills. One call per sub-block (a call per tile
// and group cost a quarter of the time at M = 8): full tiles of full groups
// inline, the edges through the tables.
// The next sub-block (pf_rows rows on; none when 0) is prefetched two tiles
// behind the one being read (the first two tiles take the chunk's last
// two): into L1 as well on AMD (prefetcht1 fills L1, cpu.h), and with rows
// a multiple of 4 KiB apart the same columns of the next rows fall in the
// sets of the lines this tile and the next still read, which they evicted
// (rm_plan); columns already read hold nothing needed again. Zen 3, 2
// threads, op / packed (min / median), alternated call by call:
// 8x4096x4096 bf16 0.50 / 0.54 -> 0.55 / 0.58, 4x4096x4096 f32 0.89 / 0.89
// -> 0.97 / 0.95, 8x4000x4096 bf16 0.68 / 0.70 -> 0.72 / 0.72.
template <int G, int NV, class TB>
void rm_sub_block(int rows, int64_t sl, const float* a, int64_t lda, const TB* b, int64_t ldb,
                  int ncols, int64_t pf_rows, bool use_strip, float* part, int64_t ldp, bool resume,
                  float* c, int64_t ldc, int finish) {
  constexpr int NR = NV * kLanes;
  alignas(64) float strip[kRmMaxSub * NR];
  const int64_t span = gemm::ceil_div(ncols, NR) * NR, back = span >= 3 * NR ? 2 * NR : 0;
  for (int j = 0; j < ncols; j += NR) {
    const int64_t pf_off = pf_rows == 0 ? 0 : pf_rows * ldb + (j >= back ? -back : span - back);
    const int n = std::min(NR, ncols - j);
    for (int r0 = 0; r0 < rows; r0 += G) {
      const int g = std::min(G, rows - r0);
      const float* ar = a + r0 * lda;
      float* pr = part + r0 * ldp + j;
      float* cr = c + r0 * ldc + j;
      auto run = [&]<RmStrip S>() __attribute__((always_inline)) {
        if (n == NR && g == G)
          rm_block<G, NV, false, TB, S>(sl, ar, lda, b + j, ldb, n, pf_off, pr, ldp, resume, cr,
                                        ldc, finish, strip);
        else
          (n == NR ? kRmTable<G, NV, false, TB, S> : kRmTable<G, NV, true, TB, S>)[g - 1](
              sl, ar, lda, b + j, ldb, n, pf_off, pr, ldp, resume, cr, ldc, finish, strip);
      };
      if (!use_strip || rows <= G)
        run.template operator()<kNoStrip>();
      else if (r0 == 0)
        run.template operator()<kSaveStrip>();
      else
        run.template operator()<kFromStrip>();
    }
  }
}

// C chunk [rows, ncols) = A·B[:, chunk] (c: ldc >= ncols rounded up to
// NV*kLanes; part: rows x that many floats, scratch). K-blocks of kc (the packed path's);
// within one, sub-blocks of `sub` rows walk the chunk's NR-column tiles in
// order, so each B row is read front to back.
template <int G, int NV, class TB>
void rm_chunk(int rows, int64_t K, int64_t kc, const RmPlan& plan, const float* a, int64_t lda,
              const TB* b, int64_t ldb, int ncols, float* part, float* c, int64_t ldc) {
  constexpr int NR = NV * kLanes;
  if (K == 0) {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < ncols; ++j) c[i * ldc + j] = 0.0f;
    return;
  }
  const int64_t ldp = gemm::ceil_div(ncols, NR) * NR;
  for (int64_t k0 = 0; k0 < K; k0 += kc) {
    const int64_t kl = std::min(kc, K - k0);
    const int64_t sub = plan.sub.rows;
    for (int64_t s0 = k0; s0 < k0 + kl; s0 += sub) {
      const int64_t sl = std::min(sub, k0 + kl - s0);
      const int finish = s0 + sl < k0 + kl ? 0 : k0 == 0 ? 1 : 2;
      rm_sub_block<G, NV, TB>(rows, sl, a + s0, lda, b + s0 * ldb, ldb, ncols,
                              plan.prefetch ? sub : 0, plan.strip, part, ldp, s0 > k0, c, ldc,
                              finish);
    }
  }
}

// ---- transposed B (N x K, unit row stride: W[n, k] at w[n*ldw + k]) ---------------
// G rows of A against R weight rows over k in [k0, k0 + kl): vector partial
// sums in part[G][R] (lanes over k), loaded and stored around the span.
// Pairs (bf16 weights, A in pair order, see run_unpacked): each 2 * kLanes
// of a weight row in one load, widened by vpunpck{l,h}wd (load_bf16_pair)
// into the lanes the A rows were laid out in; A is zero-padded to whole
// pairs, the weights' last partial pair read through a zeroed copy.
template <int G, int R, class TB, bool Pairs>
void dot_span(int64_t k0, int64_t kl, const float* a, int64_t lda, const TB* const* w,
              Vf (*part)[R], int64_t pf) {
  Vf acc[G][R];
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[i][r] = part[i][r];
  const int64_t ke = k0 + kl;
  int64_t k = k0;
  if constexpr (Pairs) {
    // The low halves of the R rows' pairs against the A rows, then the high
    // halves: both at once (2R + GR + 1 vectors) do not fit the registers.
    // Written out twice on purpose: one lambda over both halves (a constant
    // `high` argument) compiled to a loop 1.3-1.4x slower (spills).
    auto pair_block = [&](const bf16* const* wp) {
      if constexpr (G == 1) {
        // One A row: each half straight into its FMA (R + R + 2 vectors
        // loaded first do not fit 16 registers at R = 8).
        const Vf alo = load(a + k), ahi = load(a + k + kLanes);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          Vf lo, hi;
          load_bf16_pair(wp[r], lo, hi);
          acc[0][r] = fma(alo, lo, acc[0][r]);
          acc[0][r] = fma(ahi, hi, acc[0][r]);
        }
        return;
      }
      Vf wv[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        Vf lo, hi;
        load_bf16_pair(wp[r], lo, hi);
        wv[r] = lo;
      }
#pragma GCC unroll 16
      for (int i = 0; i < G; ++i) {
        const Vf av = load(a + i * lda + k);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[i][r] = fma(av, wv[r], acc[i][r]);
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        Vf lo, hi;
        load_bf16_pair(wp[r], lo, hi);
        wv[r] = hi;
      }
#pragma GCC unroll 16
      for (int i = 0; i < G; ++i) {
        const Vf av = load(a + i * lda + k + kLanes);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[i][r] = fma(av, wv[r], acc[i][r]);
      }
    };
    for (; k + 2 * kLanes <= ke; k += 2 * kLanes) {
      const bf16* wp[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        wp[r] = w[r] + k;
        __builtin_prefetch(w[r] + k + pf, 0, 2);
      }
      pair_block(wp);
    }
    if (k < ke) {
      const size_t n = static_cast<size_t>(ke - k);
      alignas(64) bf16 buf[R][2 * kLanes] = {};
      const bf16* wp[R];
      for (int r = 0; r < R; ++r) {
        std::memcpy(buf[r], w[r] + k, sizeof(bf16) * n);
        wp[r] = buf[r];
      }
      pair_block(wp);
    }
    k = ke;
  }
  for (; k + kLanes <= ke; k += kLanes) {
    if constexpr (G == 1) {
      // One A row: each weight vector straight into its FMA. All R loaded
      // first (as below) is R + R + 1 vectors: at R = 8 on AVX2 GCC kept an
      // accumulator on the stack (a store and a reload around its FMA).
      const Vf av = load(a + k);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        acc[0][r] = fma(av, load(w[r] + k), acc[0][r]);
        __builtin_prefetch(w[r] + k + pf, 0, 2);
      }
      continue;
    }
    Vf wv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      wv[r] = load(w[r] + k);
      __builtin_prefetch(w[r] + k + pf, 0, 2);
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
using DotFn = void (*)(int64_t, int64_t, const float*, int64_t, const TB* const*, Vf (*)[R],
                       int64_t);
template <int R, class TB, bool Pairs, int... Gs>
constexpr auto dot_table(std::integer_sequence<int, Gs...>) {
  return std::array<DotFn<R, TB>, sizeof...(Gs)>{&dot_span<Gs + 1, R, TB, Pairs>...};
}

// C tile [rows, ncols) = A·W[tile rows]^T: R weight rows at a time, K in
// blocks of kDotKb shared by the row groups, the lanes summed at the end.
template <int G, int R, bool Pairs, class TB>
void dot_tile(int rows, int64_t K, const float* a, int64_t lda, const TB* w, int64_t ldw, int ncols,
              float* c, int64_t ldc) {
  static constexpr auto fns = dot_table<R, TB, Pairs>(std::make_integer_sequence<int, G>());
  const int64_t pf = dot_pf_elems<TB>();
  for (int j0 = 0; j0 < ncols; j0 += R) {
    const TB* wr[R];
    // Past ncols, repeat a valid row (its sums are not stored).
    for (int r = 0; r < R; ++r) wr[r] = w + (j0 + r < ncols ? j0 + r : j0) * ldw;
    Vf part[kMaxRows][R];
    for (int i = 0; i < rows; ++i)
      for (int r = 0; r < R; ++r) part[i][r] = zero();
    for (int64_t k0 = 0; k0 < K; k0 += kDotKb) {
      const int64_t kl = std::min(kDotKb, K - k0);
      // At the last K-block, the next R weight rows' first kDotPfBytes:
      // the in-row prefetch runs only `pf` ahead of each row, so the next
      // group of rows started on misses (Zen 3, 2 threads, alternated call by
      // call: bf16 8x4096x4096 and 8x11008x4096 5-9% faster, f32 M = 8
      // 2-10%, f32 M = 1 the same).
      if (k0 + kDotKb >= K)
        for (int r = 0; r < R && j0 + R + r < ncols; ++r)
          for (int64_t o = 0; o < kDotPfBytes; o += 64)
            __builtin_prefetch(reinterpret_cast<const char*>(w + (j0 + R + r) * ldw) + o, 0, 2);
      for (int r0 = 0; r0 < rows; r0 += G)
        fns[std::min(G, rows - r0) - 1](k0, kl, a + r0 * lda, lda, wr, part + r0, pf);
    }
    for (int i = 0; i < rows; ++i)
      for (int r = 0; r < R && j0 + r < ncols; ++r) c[i * ldc + j0 + r] = reduce_add(part[i][r]);
  }
}

// ---- the drivers: output chunks over the threads, the epilogue per chunk ---------
// Output chunks are whole nr-column tiles, at most cap columns: the same
// number per thread (parallel_for splits them statically, in order) and as
// few as fit, one per thread where one fits (each streams one contiguous
// span of every B row; two chunks per thread measured slower). Chunk t holds
// tiles [t tiles / n, (t + 1) tiles / n), so the threads' column ranges
// differ by at most a tile. (Chunks of one width, as before, left the last
// thread the remainder: at M = 8 on AVX-512, N = 4096 went 960, 960 | 960,
// 960, 256.) Widths never change a column's arithmetic.
struct ChunkPlan {
  int64_t tiles, n, w;  // w: the widest chunk
};
inline ChunkPlan chunk_plan(int64_t H, int64_t nr, int64_t cap) {
  const int64_t tiles = gemm::ceil_div(H, nr), T = num_threads();
  const int64_t per = gemm::ceil_div(gemm::ceil_div(tiles, T), std::max<int64_t>(cap / nr, 1));
  const int64_t n = std::max<int64_t>(1, std::min(tiles, T * per));
  return {tiles, n, gemm::ceil_div(tiles, n) * nr};
}
// Columns per chunk for `rows` rows of partial sums in kRmAccFloats.
inline int64_t rm_cap(int rows) { return kRmAccFloats / rows; }

// chunk(b_col, ncols, c, ldc) computes C's columns [b_col, b_col + ncols) of
// A·B into c. Gated: the gate chunk and the value chunk side by side (the
// packed gated panel's layout: the value chunk at the gate's width rounded up
// to nr), then the gated epilogue. rows x the widest chunk <= kRmAccFloats
// (c holds twice that).
template <class ChunkFn>
void run_chunks(int rows, int64_t N, int64_t nr, int64_t cap, const OutView& out,
                const Epilogue& ep, ChunkFn&& chunk) {
  const int64_t H = ep.gated ? N / 2 : N;
  const ChunkPlan plan = chunk_plan(H, nr, cap);
  const int64_t W = plan.w;
  parallel_for(plan.n, 1, [&](int64_t t0, int64_t t1) {
    const StreamFence fence{out.stream};
    alignas(64) float c[2 * kRmAccFloats];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t j = t * plan.tiles / plan.n * nr;
      const int ncols = static_cast<int>(std::min(H, (t + 1) * plan.tiles / plan.n * nr) - j);
      if (ep.gated) {
        const int64_t wc = gemm::ceil_div(ncols, nr) * nr;
        chunk(j, ncols, c, 2 * W);
        chunk(H + j, ncols, c + wc, 2 * W);
        epilogue_gated(ep, c, 2 * W, rows, static_cast<int>(2 * wc), 0, j, H, out);
      } else {
        chunk(j, ncols, c, W);
        epilogue_tile(ep, c, W, rows, ncols, 0, j, out);
      }
    }
  });
}

template <int G, int NV, class TB>
void run_rm(const Params& p, int rows, int64_t N, int64_t K, const float* a, int64_t lda,
            const TB* b, int64_t ldb, const OutView& out, const Epilogue& ep) {
  constexpr int NR = NV * kLanes;
  const int64_t kc = gemm::even_kc(p.kc, K, 1);
  run_chunks(rows, N, NR, rm_cap(rows), out, ep, [&](int64_t j, int ncols, float* c, int64_t ldc) {
    alignas(64) float part[kRmAccFloats];
    const RmPlan plan = rm_plan<TB>(rows, G, ncols, ldb);
    rm_chunk<G, NV>(rows, K, kc, plan, a, lda, b + j, ldb, ncols, part, c, ldc);
  });
}

template <int G, int R, bool Pairs = false, class TB>
void run_dot(int rows, int64_t N, int64_t K, const float* a, int64_t lda, const TB* w, int64_t ldw,
             const OutView& out, const Epilogue& ep) {
  run_chunks(rows, N, kDotTile, kDotTile, out, ep,
             [&](int64_t j, int ncols, float* c, int64_t ldc) {
               dot_tile<G, R, Pairs>(rows, K, a, lda, w + j * ldw, ldw, ncols, c, ldc);
             });
}

template <class TB>
void run_t(const Params& p, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
           const MatView& bv, const OutView& out, const Epilogue& ep, bool a_pairs) {
  const TB* b = static_cast<const TB*>(bv.p);
  const int rows = static_cast<int>(M);
  // B [K, 1] has both strides 1: read it as one weight row.
  if (bv.rs == 1 && (bv.cs != 1 || N == 1)) {
    if constexpr (kRmPairs<TB> && kDotPairs) {
      if (a_pairs) {
        if (rows == 1) return run_dot<1, kDotR1, true>(rows, N, K, a, lda, b, bv.cs, out, ep);
        return run_dot<kDotG, kDotR, true>(rows, N, K, a, lda, b, bv.cs, out, ep);
      }
    }
    if (rows == 1) return run_dot<1, kDotR1>(rows, N, K, a, lda, b, bv.cs, out, ep);
    return run_dot<kDotG, kDotR>(rows, N, K, a, lda, b, bv.cs, out, ep);
  }
  if (rows == 1) return run_rm<1, kRmNv1>(p, rows, N, K, a, lda, b, bv.rs, out, ep);
  return run_rm<kRmG, kRmNv>(p, rows, N, K, a, lda, b, bv.rs, out, ep);
}

}  // namespace unp

inline void run_unpacked(const Params& p, int64_t M, int64_t N, int64_t K, const float* a,
                         int64_t lda, const MatView& b, const OutView& out, const Epilogue& ep,
                         bool a_pairs) {
  switch (b.t) {
    case DType::bf16:
      return unp::run_t<bf16>(p, M, N, K, a, lda, b, out, ep, a_pairs);
    case DType::f16:
      return unp::run_t<f16>(p, M, N, K, a, lda, b, out, ep, false);
    default:
      return unp::run_t<float>(p, M, N, K, a, lda, b, out, ep, false);
  }
}

}  // namespace detail

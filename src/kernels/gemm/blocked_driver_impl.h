// The blocked GEMM driver, written once for every packed microkernel:
// included by gemm_impl.h inside an ISA's `detail` namespace (after Scratch
// and the epilogue), used by run_tt (gemm_impl.h: f32 A panels times f32,
// bf16 or f16 B panels) and run_dp (gemm_avx512bf16.cc: bf16 k-pairs for
// vdpbf16ps).
//
// The loop: make_grid -> parallel_tasks over the (mb, nb) tasks -> task_c ->
// K == 0: finish_empty_k; else per K-block: pack the task's A block -> per NR
// panel of B: per MR row panel, prefetch a slice of the next B micro-panel
// into L2 and run the microkernel -> finish_tile on the last K-block.
//
// What differs between the microkernels is a policy type U (a small struct,
// all calls resolved at compile time and inlined; the microkernel itself is
// called through U's function-pointer table, one entry per row count):
//   static constexpr int MR, NR;          the microkernel's tile
//   static constexpr double kMacsPerCycle the FMA rate make_grid models
//   size_t a_floats(int64_t rows, int64_t kc)
//       scratch floats of a packed A block of `rows` (a multiple of MR) x kc
//   void pack_a_block(const MatView& a, int64_t m0, int64_t mlen, int64_t k0,
//                     int64_t kl, float* abuf)
//       rows [m0, m0 + mlen) x cols [k0, k0 + kl) of A into MR-row panels
//   const KB* stage_b(int64_t pnl, int64_t k0, int64_t kl, float* stage)
//       the micro-panel (rows [k0, k0 + kl) of B panel `pnl`) the kernel
//       reads: the packed panel itself, or it converted into stage once per
//       K-block for all the row panels that use it, or it staged there from
//       B as the caller holds it (RawBUkr)
//   void prefetch_share(int64_t pnl, int64_t k0, int64_t kl, int64_t q, int64_t n)
//       bring share q of n of that micro-panel's bytes (RawBUkr: its rows of
//       B) into L2; each of the n microkernel calls on the panel before it
//       issues one share
//   size_t stage_floats(int64_t kc)     scratch floats of a staged micro-panel
//   bool kernel(int rows, int64_t kl, const float* abuf, int64_t ir,
//               const KB* bp, float* c, int64_t ldc, int ncols,
//               bool accumulate, bool last, int64_t i0, int64_t jp)
//       the microkernel on rows [ir, ir + rows) of the packed block (output
//       rows i0 = m0 + ir..., columns jp...); true when it wrote the output
//       itself (so finish_tile is skipped on the last K-block).

// A row stride that is a multiple of 2 KiB maps the MR rows of a C tile to
// one or two L1 sets (12 ways): the tile's read-modify-write after every
// K-block then misses. Measured on the microkernel alone (14x32, kc = 192,
// C over 518 x N): 85-90% of the FMA peak with N = 2048, 97% with N = 2080.
inline bool c_stride_aliases(int64_t ld) { return (ld * 4) % 2048 == 0; }

// The C block a task accumulates into: the output itself when it is f32, not
// gated and its stride does not alias, else this thread's scratch block
// (padded so that it does not alias; finish_tile writes the output).
inline float* task_c(const Scratch& sc, const OutView& out, bool direct_c, int64_t m0, int64_t n0,
                     int64_t mlen, int64_t nlen, int nr, int64_t* ldc) {
  if (direct_c) {
    *ldc = out.ld;
    return static_cast<float*>(out.p) + m0 * out.ld + n0;
  }
  *ldc = ceil_div(nlen, nr) * nr;
  if (mlen > 1 && c_stride_aliases(*ldc)) *ldc += 16;
  return sc.c(static_cast<size_t>(mlen * *ldc));
}

// K == 0: C = 0, then each tile's epilogue (bias, activation, residual).
inline void finish_empty_k(const Epilogue& ep, float* c, int64_t ldc, int64_t m0, int64_t mlen,
                           int64_t n0, int64_t nlen, int nr, int64_t N, int64_t Nfull,
                           const OutView& out) {
  for (int64_t i = 0; i < mlen; ++i)
    for (int64_t j = 0; j < nlen; ++j) c[i * ldc + j] = 0.0f;
  for (int64_t jp = n0; jp < n0 + nlen; jp += nr)
    finish_tile(ep, c + (jp - n0), ldc, static_cast<int>(mlen),
                static_cast<int>(std::min<int64_t>(nr, N - jp)), m0, jp, nr, Nfull, out);
}

using gemm::even_kc;

// ---- the driver -----------------------------------------------------------------
// The tile grid: nmb x nnb tasks of mc x nc (blocks evened out). Compute-bound
// shapes pick the grid with the smallest modelled makespan: a task of
// mlen x nlen costs (per unit of K) mlen*nlen/macs_per_cycle cycles of FMAs
// (32 for f32 FMAs, 64 for the bf16 dot products), ~1.6*mlen to
// pack its A rows and ~1*nlen to stream its B panels (a B micro-panel is used
// by mlen/MR microkernel calls), and a thread runs ceil(tasks/T) tasks. So it
// keeps blocks as tall (mc <= the L2 bound) and as wide as the threads allow,
// splitting N rather than M when that re-uses B better (512x4096x4096: two
// 512x2048 tasks), and makes the task count a multiple of T. Small-M
// (memory-bound) calls split N into >= 4 tasks per thread instead.
// Only the split changes with the thread count, never the K order.
struct Grid {
  int64_t mc, nc, nmb, nnb;
};
inline Grid make_grid(int64_t M, int64_t N, int64_t mc_max, int64_t nc_max, int MR, int NR,
                      int64_t threads, bool small_m, double macs_per_cycle = 32.0) {
  const int64_t mpan = ceil_div(M, MR), npan = ceil_div(N, NR);
  const int64_t nmb0 = ceil_div(mpan, std::max<int64_t>(mc_max / MR, 1));
  const int64_t nnb0 = ceil_div(npan, std::max<int64_t>(nc_max / NR, 1));
  int64_t nmb = nmb0, nnb = nnb0;
  if (small_m) {
    nmb = std::min(nmb, mpan);
    if (threads > 1)
      nnb = std::min(npan, std::max(nnb, ceil_div(4 * threads, nmb) / threads * threads));
  } else if (threads > 1) {
    double best = 1e300;
    for (int64_t bm = nmb0; bm <= std::min(mpan, nmb0 + 4 * threads); ++bm)
      for (int64_t bn = nnb0; bn <= std::min(npan, nnb0 + 4 * threads); ++bn) {
        const double ml = static_cast<double>(ceil_div(mpan, bm) * MR);
        const double nl = static_cast<double>(ceil_div(npan, bn) * NR);
        const double waves = static_cast<double>(ceil_div(bm * bn, threads));
        const double cost = waves * (ml * nl / macs_per_cycle + 1.6 * ml + 1.0 * nl);
        if (cost < best * 0.999) {
          best = cost;
          nmb = bm;
          nnb = bn;
        }
      }
  }
  Grid g;
  g.mc = ceil_div(mpan, nmb) * MR;
  g.nc = ceil_div(npan, nnb) * NR;
  g.nmb = ceil_div(M, g.mc);
  g.nnb = ceil_div(N, g.nc);
  return g;
}

// The grid of a blocked run with microkernel U (also the decode path's).
template <class U>
inline Grid blocked_grid(const Params& p, int64_t M, int64_t N, int64_t threads) {
  return make_grid(M, N, std::max<int64_t>(p.mc / U::MR, 1) * U::MR,
                   std::max<int64_t>(p.nc / U::NR, 1) * U::NR, U::MR, U::NR, threads, M <= U::MR,
                   U::kMacsPerCycle);
}

// The tasks of grid g: task(m0, mlen, n0, nlen, c, ldc) for each task's block
// and its C (task_c) when K > 0; K == 0 is finished here.
template <class TaskFn>
void run_tasks(const Scratch& sc, const Grid& g, int nr, int64_t M, int64_t N, int64_t K,
               int64_t Nfull, bool direct_c, const OutView& out, const Epilogue& ep,
               TaskFn&& task) {
  parallel_tasks(
      g.nmb * g.nnb,
      [&](int64_t t) {
        const StreamFence fence{out.stream};
        // N-blocks outer: consecutive tasks share an A block and stream B panels in order.
        const int64_t mb = t % g.nmb, nb = t / g.nmb;
        const int64_t m0 = mb * g.mc, mlen = std::min(g.mc, M - m0);
        const int64_t n0 = nb * g.nc, nlen = std::min(g.nc, N - n0);
        int64_t ldc = 0;
        float* c = task_c(sc, out, direct_c, m0, n0, mlen, nlen, nr, &ldc);
        if (K == 0) return finish_empty_k(ep, c, ldc, m0, mlen, n0, nlen, nr, N, Nfull, out);
        task(m0, mlen, n0, nlen, c, ldc);
      },
      sc.threads);
}

// The blocked run: K-blocks of kc (the last one shorter), the same order of
// operations for any grid, so the bits depend on kc only.
template <class U>
void run_blocked(const U& u, const Params& p, const Scratch& sc, int64_t M, int64_t N,
                 int64_t Nfull, int64_t K, int64_t kc, const MatView& a, const OutView& out,
                 const Epilogue& ep, bool direct_c) {
  constexpr int MR = U::MR, NR = U::NR;
  run_tasks(sc, blocked_grid<U>(p, M, N, sc.threads), NR, M, N, K, Nfull, direct_c, out, ep,
            [&](int64_t m0, int64_t mlen, int64_t n0, int64_t nlen, float* c, int64_t ldc) {
              const int64_t nrp = ceil_div(mlen, MR);
              const size_t a_fl = (u.a_floats(nrp * MR, kc) + 15) / 16 * 16;
              float* abuf = sc.a(a_fl + u.stage_floats(kc));
              float* stage = abuf + a_fl;
              for (int64_t k0 = 0; k0 < K; k0 += kc) {
                const int64_t kl = std::min(kc, K - k0);
                const bool last = k0 + kl == K;
                u.pack_a_block(a, m0, mlen, k0, kl, abuf);
                for (int64_t jp = n0; jp < n0 + nlen; jp += NR) {
                  const int ncols = static_cast<int>(std::min<int64_t>(NR, N - jp));
                  const auto* bp = u.stage_b(jp / NR, k0, kl, stage);
                  // The next B micro-panel is another panel (a whole panel away), a
                  // jump the hardware prefetcher does not follow: each microkernel
                  // call brings its share of it into L2 ahead of use.
                  const bool next = jp + NR < n0 + nlen;
                  for (int64_t ir = 0, q = 0; ir < mlen; ir += MR, ++q) {
                    const int rows = static_cast<int>(std::min<int64_t>(MR, mlen - ir));
                    float* ct = c + ir * ldc + (jp - n0);
                    if (next) u.prefetch_share(jp / NR + 1, k0, kl, q, nrp);
                    const bool wrote =
                        u.kernel(rows, kl, abuf, ir, bp, ct, ldc, ncols, k0 > 0, last, m0 + ir, jp);
                    if (last && !wrote)
                      finish_tile(ep, ct, ldc, rows, ncols, m0 + ir, jp, NR, Nfull, out);
                  }
                }
              }
            });
}

// The int8 GEMM driver, written once: A packed per call, W panels from
// pack_w, K blocks, per-thread int32 tiles, the column corrections and the
// fused epilogue. Included inside an ISA namespace that defines kMR (rows per
// microkernel) and kNRV (int32 vectors per row, so the panel width is
// kNR = kNRV * kLanes), after the vec_*.h / qvec_*.h names the epilogue uses.
// run_with<Ops> takes the operand form as Ops: the packed A bytes per row and
// step of 4 k (kAK4), the per-thread W scratch (kWScratch bytes per column and
// step of 4 k), the K block (kc4()) and rows per block of C (mc()), pack_a,
// prepare_w (a K block of a W panel as the microkernel reads it) and kernel.
// The plain form is in qgemm_impl.h.

constexpr int kNR = kNRV * kLanes;

#include "kernels/act/act_vec.inc"

// Row m, columns [n0, n0 + nvalid) of a tile (c: kNR int32 sums), activation
// K (epilogue_row picks it once per row).
template <act::Kind K>
void epilogue_row_k(const qgemm::Args& a, const int32_t* c, const int32_t* corr, int64_t m,
                    int64_t n0, int nvalid) {
  const qgemm::Epilogue& ep = a.ep;
  for (int v = 0; v < kNRV; ++v) {
    const int off = v * kLanes;
    const int n = std::min(kLanes, nvalid - off);
    if (n <= 0) break;
    const int64_t col = n0 + off;
    const Vi acc = loadi(c + off) - loadi(corr + col);
    const int64_t yo = m * a.ldy + col;
    if (ep.out == qgemm::Out::i32) {
      storei_n(static_cast<int32_t*>(a.y) + yo, acc, n);
      continue;
    }
    // Fixed f32 order (the reference emulates it): ((float)acc * a_scale) * w_scale [+ bias]
    Vf f = cvt_f32(acc) * set1(ep.a_scale[m * ep.a_scale_rs]);
    const Vf ws = ep.w_scale_cs ? load_n(ep.w_scale + col, n) : set1(ep.w_scale[0]);
    f = ep.bias ? fma(f, ws, load_n(ep.bias + col, n)) : f * ws;
    f = act_apply_t<K>(f);
    if (ep.out == qgemm::Out::f32) {
      store_n(static_cast<float*>(a.y) + yo, f, n);
    } else if (ep.out == qgemm::Out::bf16) {
      store_n(static_cast<bf16*>(a.y) + yo, f, n);
    } else if (ep.out == qgemm::Out::f16) {
      store_n(static_cast<f16*>(a.y) + yo, f, n);
    } else {
      const bool u8 = ep.out == qgemm::Out::u8;
      const Vf lo = set1(u8 ? 0.0f : -128.0f), hi = set1(u8 ? 255.0f : 127.0f);
      Vf q = round(f / set1(ep.y_scale)) + set1(static_cast<float>(ep.y_zp));
      q = min(max(q, lo), hi);
      store_bytes_n(static_cast<uint8_t*>(a.y) + yo, cvt_round(q), n);
    }
  }
}

inline void epilogue_row(const qgemm::Args& a, const int32_t* c, const int32_t* corr, int64_t m,
                         int64_t n0, int nvalid) {
  with_act(a.ep.act,
           [&](auto kind) { epilogue_row_k<decltype(kind)::value>(a, c, corr, m, n0, nvalid); });
}

template <class T>
T* align64(void* p) {
  return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t{63});
}

template <class Ops>
void run_with(const qgemm::Args& a) {
  const int64_t M = a.M, N = a.N, K = a.K, K4 = qgemm::k4_of(K), lda = K4 * Ops::kAK4;
  if (M == 0 || N == 0) return;
  uint8_t* ap = align64<uint8_t>(a.ws);
  const int64_t mpad = (M + kMR - 1) / kMR * kMR;
  int32_t* corr = align64<int32_t>(ap + mpad * lda);
  const int32_t c = (a.a_signed ? 128 : 0) + a.a_zp;
  const int32_t* colsum = qgemm::packed_colsum(a.packed_w, kNR, N, K);
  const int64_t npad = (N + kNR - 1) / kNR * kNR;
  for (int64_t n = 0; n < npad; ++n) corr[n] = c * colsum[n];
  // A as u8 (s8 shifted by 128) in micro-panels of kMR rows, one cache line
  // per k4 step; K and the rows past M padded with zeros.
  parallel_for(mpad / kMR, 1, [&](int64_t b, int64_t e) {
    const uint8_t flip = a.a_signed ? 0x80 : 0;
    for (int64_t p = b; p < e; ++p) {
      const int rows = static_cast<int>(std::min<int64_t>(kMR, M - p * kMR));
      Ops::pack_a(static_cast<const uint8_t*>(a.a) + p * kMR * a.lda, a.lda, rows, K, flip,
                  ap + p * kMR * lda);
    }
  });
  const int64_t MC = Ops::mc(), NC = qgemm::block_cols(kNR);
  const int64_t tm = (M + MC - 1) / MC, tn = (N + NC - 1) / NC;
  const int8_t* pw = static_cast<const int8_t*>(a.packed_w);
  // K blocks of at most kc4 k4 steps (equal sizes), bounding the W panel
  // slice one microkernel call streams. The int32 sums of a block tile are kept
  // across the K blocks in the thread's slot of the workspace (MC x NC, L2),
  // after the corrections. Integer sums: the blocking does not change any result.
  const int64_t kc4_max = Ops::kc4();
  const int64_t nkb = (K4 + kc4_max - 1) / kc4_max;
  const int64_t kc4 = (K4 + nkb - 1) / nkb;
  int32_t* cbufs = align64<int32_t>(corr + npad);
  uint8_t* wbufs = align64<uint8_t>(nkb > 1 ? cbufs + a.threads * MC * NC : cbufs);
  const int64_t wslot = std::min(K4, kc4_max) * kNR * Ops::kWScratch;  // bytes per thread
  parallel_tasks(
      tm * tn,
      [&](int64_t t) {
        const int slot = a.threads == 1 ? 0 : thread_index();
        int32_t* cbuf = cbufs + static_cast<int64_t>(slot) * MC * NC;
        void* wscratch = wbufs + slot * wslot;
        alignas(64) int32_t tile1[kMR * kNR];    // one K block: a single L1-hot tile
        const int64_t im = t % tm, in = t / tm;  // consecutive tasks share a block of W
        const int64_t m0 = im * MC, m1 = std::min(M, m0 + MC);
        const int64_t n0 = in * NC, n1 = std::min(N, n0 + NC);
        for (int64_t k40 = 0; k40 < K4; k40 += kc4) {
          const int64_t kn = std::min(kc4, K4 - k40);
          const bool last = k40 + kn == K4;
          for (int64_t p0 = n0; p0 < n1; p0 += kNR) {
            const auto* wp =
                Ops::prepare_w(pw + (p0 / kNR) * kNR * K4 * 4 + k40 * kNR * 4, kn, wscratch);
            const int nvalid = static_cast<int>(std::min<int64_t>(kNR, N - p0));
            for (int64_t mm = m0; mm < m1; mm += kMR) {
              const int mr = static_cast<int>(std::min<int64_t>(kMR, m1 - mm));
              int32_t* tile =
                  nkb == 1 ? tile1
                           : cbuf + ((p0 - n0) / kNR * (MC / kMR) + (mm - m0) / kMR) * kMR * kNR;
              Ops::kernel(mr, ap + mm * lda + k40 * kMR * Ops::kAK4, wp, kn, tile, k40 > 0);
              if (last)
                for (int i = 0; i < mr; ++i)
                  epilogue_row(a, tile + i * kNR, corr, mm + i, p0, nvalid);
            }
          }
        }
      },
      a.threads);
}

// Packing of the int8 weights (shared by every ISA's kernel).
#include "kernels/qgemm/qgemm.h"

#include <algorithm>
#include <cstring>

#include "kernels/qgemm/qpack.h"
#include "opsnn/thread_pool.h"

namespace opsnn::qgemm {

int64_t k4_of(int64_t K) { return (K + 3) / 4; }

int64_t kc4_max(int /*mr*/, int /*nr*/) {
  // Measured (2048x768x768, 512x4096x4096, 2048^3 on AVX-512 VNNI): blocks
  // sized for L1 (W slice + A micro-panel <= 20 KiB) were 5-20% slower than
  // no K blocking; the hardware streams the W panel slice from L2 well. So
  // only K > 4096 is blocked, bounding the 6x64 panel slice at 256 KiB (L2).
  return 1024;
}

static int64_t panels(int nr, int64_t N) { return (N + nr - 1) / nr; }

size_t packed_bytes(int nr, int64_t N, int64_t K) {
  const size_t body = static_cast<size_t>(panels(nr, N) * nr * k4_of(K) * 4);
  return ((body + 63) & ~size_t{63}) + static_cast<size_t>(panels(nr, N) * nr) * 4;
}

const int32_t* packed_colsum(const void* packed, int nr, int64_t N, int64_t K) {
  const size_t body = static_cast<size_t>(panels(nr, N) * nr * k4_of(K) * 4);
  return reinterpret_cast<const int32_t*>(static_cast<const uint8_t*>(packed) +
                                          ((body + 63) & ~size_t{63}));
}

void pack_w(int nr, int64_t N, int64_t K, const int8_t* w, int64_t ldw, void* dst) {
  const int64_t K4 = k4_of(K), P = panels(nr, N);
  uint8_t* d = static_cast<uint8_t*>(dst);
  int32_t* colsum = const_cast<int32_t*>(packed_colsum(dst, nr, N, K));
  // Panels are independent: split them across threads (each byte is written
  // by one thread, so the result does not depend on the thread count).
  parallel_for(P, 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t n0 = p * nr;
      const int rows = static_cast<int>(std::min<int64_t>(nr, N - n0));
      pack_panel(reinterpret_cast<const uint8_t*>(w + n0 * ldw), ldw, rows, nr, K, 0,
                 d + n0 * K4 * 4);
      for (int j = 0; j < nr; ++j)
        colsum[n0 + j] = j < rows ? row_sum_i8(w + (n0 + j) * ldw, K) : 0;
    }
  });
}

bool weights_fit_7bit(const int8_t* w, int64_t N, int64_t K, int64_t ldw) {
  for (int64_t n = 0; n < N; ++n) {
    const int8_t* r = w + n * ldw;
    // w + 64 as a byte is at most 128 exactly for w in [-64, 64] (the loop
    // vectorises to pmaxub).
    uint8_t top = 0;
    for (int64_t k = 0; k < K; ++k) top = std::max(top, static_cast<uint8_t>(r[k] + 64));
    if (top > 128) return false;
  }
  return true;
}

const KernelFns& for_weights(const KernelFns& f, const int8_t* w, int64_t N, int64_t K,
                             int64_t ldw) {
  if (&f != &fns_avx2() || !weights_fit_7bit(w, N, K, ldw)) return f;
  return fns_avx2_w7();
}

int64_t kc4_of(const KernelFns& f) { return f.kc4 > 0 ? f.kc4 : kc4_max(f.mr, f.nr); }

size_t workspace_bytes(const KernelFns& f, int64_t M, int64_t N, int64_t K, int threads) {
  const int nr = f.nr, mr = f.mr;
  const size_t t = static_cast<size_t>(std::max(threads, 1));
  // packed A (K padded to 4) + the per-column correction (N padded to nr) + alignment
  // M rounded up to a multiple of 12 (every kernel's rows per micro-panel divides it)
  size_t bytes = static_cast<size_t>((M + 11) / 12 * 12 * k4_of(K) * f.a_k4_bytes) + 64 +
                 static_cast<size_t>(panels(nr, N) * nr) * 4 + 64;
  if (k4_of(K) > kc4_of(f))
    bytes += t * static_cast<size_t>((f.mc > 0 ? f.mc : block_rows(mr)) * block_cols(nr)) *
                 sizeof(int32_t) +
             64;
  if (f.w_k4_bytes > 0)
    bytes += t * static_cast<size_t>(std::min(k4_of(K), kc4_of(f)) * nr * f.w_k4_bytes) + 64;
  return bytes;
}

}  // namespace opsnn::qgemm

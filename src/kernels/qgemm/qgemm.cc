// Packing of the int8 weights (shared by every ISA's kernel).
#include "kernels/qgemm/qgemm.h"

#include <cstring>

namespace opsnn::qgemm {

int64_t k4_of(int64_t K) { return (K + 3) / 4; }

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
  int8_t* d = static_cast<int8_t*>(dst);
  int32_t* colsum = const_cast<int32_t*>(packed_colsum(dst, nr, N, K));
  for (int64_t p = 0; p < P; ++p) {
    int8_t* pd = d + p * nr * K4 * 4;
    for (int j = 0; j < nr; ++j) {
      const int64_t n = p * nr + j;
      int32_t cs = 0;
      for (int64_t k4 = 0; k4 < K4; ++k4)
        for (int q = 0; q < 4; ++q) {
          const int64_t k = k4 * 4 + q;
          const int8_t v = (n < N && k < K) ? w[n * ldw + k] : int8_t{0};
          pd[(k4 * nr + j) * 4 + q] = v;
          cs += v;
        }
      colsum[n] = cs;
    }
  }
}

size_t workspace_bytes(int nr, int64_t M, int64_t N, int64_t K) {
  // packed A (u8, K padded to 4) + the per-column correction (N padded to nr) + alignment
  // M rounded up to a multiple of 12 (every kernel's rows per micro-panel divides it)
  return static_cast<size_t>((M + 11) / 12 * 12 * k4_of(K) * 4) + 64 +
         static_cast<size_t>(panels(nr, N) * nr) * 4 + 64;
}

}  // namespace opsnn::qgemm

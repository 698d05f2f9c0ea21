// K blocking shared by the packed GEMM driver and the unpacked-weight path:
// both must cut K the same way to give the same bits.
#pragma once

#include <algorithm>
#include <cstdint>

namespace opsnn::gemm {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// K-blocks of equal size, at most kc (a multiple of `mult`): 640 = 4 x 160
// rather than 3 x 192 + 64, whose short last block pays a whole C
// read-modify-write and kernel entry for a third of the work. Depends on K
// only, never on the thread count.
inline int64_t even_kc(int64_t kc, int64_t K, int64_t mult) {
  if (K <= 0) return 0;
  kc = std::min(std::max<int64_t>(kc, 1), K);
  const int64_t nkb = ceil_div(K, kc);
  return ceil_div(ceil_div(K, nkb), mult) * mult;
}

}  // namespace opsnn::gemm

// int8 GEMM, portable: 4 rows x 8 columns, one int32 per lane.
#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "kernels/qgemm/qgemm.h"
#include "kernels/qgemm/qvec_scalar.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::scalar::plain {
constexpr int kMR = 4, kNRV = 8;
using VI = int32_t;
inline VI vzero() { return 0; }
inline VI loadw(const int8_t* p) {  // 4 bytes of one column
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline VI bcast4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline VI dp(VI acc, VI a, VI w) {
  const uint32_t ua = static_cast<uint32_t>(a), uw = static_cast<uint32_t>(w);
  for (int q = 0; q < 4; ++q)
    acc += static_cast<int32_t>((ua >> (8 * q)) & 0xffu) *
           static_cast<int32_t>(static_cast<int8_t>((uw >> (8 * q)) & 0xffu));
  return acc;
}
inline VI loadc(const int32_t* p) { return *p; }
inline void storev(int32_t* p, VI v) { *p = v; }
#include "kernels/qgemm/qgemm_impl.h"
}  // namespace opsnn::simd::scalar::plain

namespace opsnn::qgemm {
const KernelFns& fns_scalar() {
  static const KernelFns f{"4x8_scalar", simd::scalar::plain::kNR, simd::scalar::plain::kMR,
                           &simd::scalar::plain::run};
  return f;
}
}  // namespace opsnn::qgemm

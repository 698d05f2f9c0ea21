// The plain operand form of the int8 GEMM and its microkernel: A packed as u8
// ([K4][kMR][4] bytes per micro-panel), W panels read in place. Included by
// qgemm_{scalar,avxvnni,avx512vnni}.cc inside an ISA namespace that defines,
// besides what qgemm_driver.h needs: VI, vzero(), loadw(p) (kLanes columns x
// 4 k of the packed panel), bcast4(p) (4 activation bytes to every lane),
// loadc(p), dp(acc, a, w) (acc += sum of 4 u8 x s8 products per lane, exact)
// and storev(p, v).

#include "kernels/qgemm/qgemm_driver.h"

// a: a packed A micro-panel ([K4][kMR][4] bytes); w: a packed W panel.
// acc_in: add to the sums already in c (a later K block), else start from 0.
template <int MR>
void ukernel(const uint8_t* a, const int8_t* w, int64_t K4, int32_t* c, bool acc_in) {
  VI acc[MR][kNRV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < kNRV; ++v) acc[i][v] = acc_in ? loadc(c + i * kNR + v * kLanes) : vzero();
  for (int64_t k4 = 0; k4 < K4; ++k4) {
    VI wv[kNRV];
    for (int v = 0; v < kNRV; ++v) wv[v] = loadw(w + (k4 * kNR + v * kLanes) * 4);
    for (int i = 0; i < MR; ++i) {
      const VI ab = bcast4(a + (k4 * kMR + i) * 4);
      for (int v = 0; v < kNRV; ++v) acc[i][v] = dp(acc[i][v], ab, wv[v]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < kNRV; ++v) storev(c + i * kNR + v * kLanes, acc[i][v]);
}

using UkFn = void (*)(const uint8_t*, const int8_t*, int64_t, int32_t*, bool);
template <int... I>
constexpr std::array<UkFn, sizeof...(I)> uk_table(std::integer_sequence<int, I...>) {
  return {&ukernel<I + 1>...};
}
inline constexpr std::array<UkFn, kMR> kUk = uk_table(std::make_integer_sequence<int, kMR>{});

// The plain form for run_with: K blocks of kc4_max, blocks of C of
// block_rows(kMR) rows.
struct PlainOperands {
  static constexpr int kAK4 = 4;           // packed A bytes per row and step of 4 k
  static constexpr int64_t kWScratch = 0;  // per thread: W scratch bytes per column and k4
  static int64_t kc4() { return qgemm::kc4_max(kMR, kNR); }
  static int64_t mc() { return qgemm::block_rows(kMR); }
  static void pack_a(const uint8_t* src, int64_t ld, int rows, int64_t K, uint8_t flip,
                     uint8_t* dst) {
    qgemm::pack_panel(src, ld, rows, kMR, K, flip, dst);
  }
  // kn steps of 4 k of a packed W panel, as the kernel reads them.
  static const int8_t* prepare_w(const int8_t* w, int64_t /*kn*/, void* /*scratch*/) { return w; }
  static void kernel(int mr, const uint8_t* a, const int8_t* w, int64_t kn, int32_t* c,
                     bool acc_in) {
    kUk[static_cast<size_t>(mr - 1)](a, w, kn, c, acc_in);
  }
};

inline void run(const qgemm::Args& a) { run_with<PlainOperands>(a); }

// int8 GEMM on plain AVX2 (no VNNI), exact. vpmaddubsw is not used because
// its 16-bit pair sums saturate (255 * 127 * 2 > 32767); the u8 x s8 products
// are summed in pairs by vpmaddwd on 16-bit operands instead. Both operands
// arrive already split into 16-bit even and odd k: A when it is packed (per
// row and step of 4 k: (a0, a2) and (a1, a3) as s16 pairs, each one 32-bit
// broadcast), W per K-block of a panel into the thread's scratch, converted
// once and used by every row micro-panel of the block. A step of 4 k over
// 3 rows x 16 columns is then 12 vpmaddwd + 12 vpaddd: the same count of
// multiplies as vpmaddubsw + vpmaddwd(1), against 46 instructions per 4 rows
// when the microkernel widened both operands itself (0.69-0.71x oneDNN's
// int8 matmul at AVX2 on 2048-sized shapes then). It runs through the shared
// driver (qgemm_driver.h) as its own operand form.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "kernels/qgemm/qgemm.h"
#include "kernels/qgemm/qvec_avx2.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx2::plain {
constexpr int kMR = 3, kNRV = 2;
#include "kernels/qgemm/qgemm_driver.h"
#include "kernels/qgemm/qgemm_ops_avx2.inc"

// Packed A: per micro-panel of kMR rows, [K4][kMR][8 bytes] = s16 (a0, a2, a1, a3).
constexpr int kA16 = 8;
// W scratch: per step of 4 k, [kNRV][even 32 B, odd 32 B] (s16 pairs (w0, w2), (w1, w3)).
constexpr int kW16 = 8;
// K block: 128 steps of 4 k, so that a panel's split W slice (16 KiB) and the
// A micro-panel stay in L1 across the block's row micro-panels.
constexpr int64_t kKc4 = 128;
// Rows per block of C: 32 micro-panels, so that a W block read from L3 (W
// beyond L2: 2048^3) serves 96 rows, not 24.
constexpr int64_t kMc = kMR * 32;

// Rows [0, rows) of src (u8 after ^ flip, zero past K and past rows) into a
// micro-panel of the split form.
inline void pack_a16(const uint8_t* src, int64_t ld, int rows, int64_t K, uint8_t flip,
                     uint8_t* dst) {
  const int64_t K4 = qgemm::k4_of(K);
  // Within each 4 bytes: 0, 2, 1, 3; zero-extended to 16 bits.
  const __m128i order = _mm_setr_epi8(0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15);
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  for (int i = 0; i < kMR; ++i) {
    const uint8_t* s = src + i * ld;
    int64_t k4 = 0;
    if (i < rows) {
      for (; k4 + 4 <= K / 4; k4 += 4) {  // 16 bytes: 4 steps of 4 k
        const __m128i v = _mm_shuffle_epi8(
            _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k4 * 4)), f), order);
        const __m128i lo = _mm_cvtepu8_epi16(v), hi = _mm_cvtepu8_epi16(_mm_srli_si128(v, 8));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + ((k4 + 0) * kMR + i) * kA16), lo);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + ((k4 + 1) * kMR + i) * kA16),
                         _mm_srli_si128(lo, 8));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + ((k4 + 2) * kMR + i) * kA16), hi);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + ((k4 + 3) * kMR + i) * kA16),
                         _mm_srli_si128(hi, 8));
      }
    }
    for (; k4 < K4; ++k4) {
      uint16_t t[4];
      for (int q = 0; q < 4; ++q) {
        const int64_t k = k4 * 4 + q;
        t[(q & 1) * 2 + q / 2] = i < rows && k < K ? static_cast<uint8_t>(s[k] ^ flip) : 0;
      }
      std::memcpy(dst + (k4 * kMR + i) * kA16, t, sizeof t);
    }
  }
}

// kn steps of 4 k of a packed W panel ([K4][kNR][4] s8) into the split form.
inline void split_w(const int8_t* w, int64_t kn, int16_t* dst) {
  for (int64_t k4 = 0; k4 < kn; ++k4)
    for (int v = 0; v < kNRV; ++v) {
      const VI x = loadw(w + (k4 * kNR + v * kLanes) * 4);
      const VI even = _mm256_srai_epi16(_mm256_slli_epi16(x, 8), 8);
      const VI odd = _mm256_srai_epi16(x, 8);
      int16_t* d = dst + (k4 * kNRV + v) * 2 * 16;
      _mm256_store_si256(reinterpret_cast<__m256i*>(d), even);
      _mm256_store_si256(reinterpret_cast<__m256i*>(d + 16), odd);
    }
}

template <int MR>
void ukernel16(const uint8_t* a, const int16_t* w, int64_t K4, int32_t* c, bool acc_in) {
  VI acc[MR][kNRV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < kNRV; ++v) acc[i][v] = acc_in ? loadc(c + i * kNR + v * kLanes) : vzero();
  for (int64_t k4 = 0; k4 < K4; ++k4) {
    VI we[kNRV], wo[kNRV];
    for (int v = 0; v < kNRV; ++v) {
      we[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + (k4 * kNRV + v) * 32));
      wo[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + (k4 * kNRV + v) * 32 + 16));
    }
    for (int i = 0; i < MR; ++i) {
      const uint8_t* ai = a + (k4 * kMR + i) * kA16;
      const VI ae = bcast4(ai), ao = bcast4(ai + 4);
      for (int v = 0; v < kNRV; ++v) {
        acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(ae, we[v]));
        acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(ao, wo[v]));
      }
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < kNRV; ++v) storev(c + i * kNR + v * kLanes, acc[i][v]);
}

using Uk16Fn = void (*)(const uint8_t*, const int16_t*, int64_t, int32_t*, bool);
template <int... I>
constexpr std::array<Uk16Fn, sizeof...(I)> uk16_table(std::integer_sequence<int, I...>) {
  return {&ukernel16<I + 1>...};
}
inline constexpr std::array<Uk16Fn, kMR> kUk16 = uk16_table(std::make_integer_sequence<int, kMR>{});

// The shared driver (qgemm_driver.h) on the split operands.
struct SplitOperands {
  static constexpr int kAK4 = kA16;
  static constexpr int64_t kWScratch = kW16;
  static int64_t kc4() { return kKc4; }
  static int64_t mc() { return kMc; }
  static void pack_a(const uint8_t* src, int64_t ld, int rows, int64_t K, uint8_t flip,
                     uint8_t* dst) {
    pack_a16(src, ld, rows, K, flip, dst);
  }
  static const int16_t* prepare_w(const int8_t* w, int64_t kn, void* scratch) {
    split_w(w, kn, static_cast<int16_t*>(scratch));
    return static_cast<const int16_t*>(scratch);
  }
  static void kernel(int mr, const uint8_t* a, const int16_t* w, int64_t kn, int32_t* c,
                     bool acc_in) {
    kUk16[static_cast<size_t>(mr - 1)](a, w, kn, c, acc_in);
  }
};
inline void run_split(const qgemm::Args& a) { run_with<SplitOperands>(a); }
}  // namespace opsnn::simd::avx2::plain

namespace opsnn::qgemm {
const KernelFns& fns_avx2() {
  static const KernelFns f{"3x16_avx2",
                           simd::avx2::plain::kNR,
                           simd::avx2::plain::kMR,
                           &simd::avx2::plain::run_split,
                           simd::avx2::plain::kA16,
                           simd::avx2::plain::kW16,
                           simd::avx2::plain::kKc4,
                           simd::avx2::plain::kMc};
  return f;
}
}  // namespace opsnn::qgemm

// Weights within [-64, 64] (ONNX Runtime's 7-bit reduce_range levels for
// CPUs without VNNI, quantize_dynamic's reduce_range): vpmaddubsw's 16-bit
// pair sums of u8 x s8 products stay within +-2 * 255 * 64 = 32640, so they
// cannot saturate, and a step of 4 k over 3 rows x 16 columns is 6
// vpmaddubsw + 6 vpmaddwd(1) + 6 vpaddd on the plain operand form (no split,
// no W scratch): a third fewer instructions per product than the split
// kernel above. The weights choose it (qgemm::for_weights).
namespace opsnn::simd::avx2::w7 {
constexpr int kMR = 3, kNRV = 2;
#include "kernels/qgemm/qgemm_ops_avx2.inc"
inline VI dp(VI acc, VI a, VI w) {
  const VI pairs = _mm256_maddubs_epi16(a, w);  // exact for w in [-64, 64]
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}
#include "kernels/qgemm/qgemm_impl.h"
}  // namespace opsnn::simd::avx2::w7

namespace opsnn::qgemm {
const KernelFns& fns_avx2_w7() {
  static const KernelFns f{"3x16_avx2_w7", simd::avx2::w7::kNR, simd::avx2::w7::kMR,
                           &simd::avx2::w7::run};
  return f;
}
}  // namespace opsnn::qgemm

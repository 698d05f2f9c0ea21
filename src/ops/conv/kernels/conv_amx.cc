// The AMX bf16 convolution (conv_amx.h): the gather of a task's input
// patches, the 2 x 2 tile blocks and their epilogue.
#include "ops/conv/conv_amx.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/simd/vec_avx512.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512::conv_amx_k {
namespace {

using conv::AmxConvArgs;
using conv::kAmxK;
using conv::kAmxM;
using conv::kAmxN;
using conv::kAmxTile;
using gemm::Act;

#include "kernels/act/act_vec.inc"

// Weights of one task's block of output channels kept within L2 while its
// pixel blocks pass.
constexpr int64_t kBlockBytes = 1 << 20;

// ldtilecfg's 64-byte operand: palette 1, tiles 0-7 all 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

void configure_tiles() {
  TileConfig c;
  for (int i = 0; i < 8; ++i) {
    c.colsb[i] = 64;
    c.rows[i] = 16;
  }
  _tile_loadconfig(&c);
}

inline Vf load_any(const void* p, DType t, int64_t i, int n) {
  return t == DType::bf16 ? load_n(static_cast<const bf16*>(p) + i, n)
                          : load_n(static_cast<const float*>(p) + i, n);
}

// Rows [0, rows) of the task's gather: pixel m0 + j's window, k = (tap, ic)
// as the packed weight, zeros for padding taps, the K tail and rows past
// cnt.
void gather(const AmxConvArgs& a, int64_t n, int64_t g, int64_t m0, int64_t cnt, int64_t rows,
            bf16* dst) {
  const conv::Window& w = a.w;
  const int64_t cg = a.cin_g, k = w.taps() * cg;
  const size_t cbytes = static_cast<size_t>(cg) * sizeof(bf16);
  const bool row_runs = a.groups == 1 && w.d[2] == 1;  // a kernel row's taps are one run
  int64_t o0 = m0 / (w.out[1] * w.out[2]), o1 = m0 / w.out[2] % w.out[1], o2 = m0 % w.out[2];
  for (int64_t j = 0; j < rows; ++j) {
    bf16* row = dst + j * a.lda;
    if (j >= cnt) {
      std::memset(row, 0, static_cast<size_t>(a.kpad) * sizeof(bf16));
      continue;
    }
    const int64_t i0 = o0 * w.s[0] - w.pb[0], i1 = o1 * w.s[1] - w.pb[1],
                  i2 = o2 * w.s[2] - w.pb[2];
    bf16* out = row;
    for (int64_t kd = 0; kd < w.k[0]; ++kd)
      for (int64_t kh = 0; kh < w.k[1]; ++kh) {
        const int64_t id = i0 + kd * w.d[0], ih = i1 + kh * w.d[1];
        const int64_t krow = w.k[2] * cg;
        if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
          std::memset(out, 0, static_cast<size_t>(krow) * sizeof(bf16));
          out += krow;
          continue;
        }
        const bf16* src = a.x + ((n * w.in[0] + id) * w.in[1] + ih) * w.in[2] * a.cin + g * cg;
        if (row_runs && i2 >= 0 && i2 + w.k[2] <= w.in[2]) {
          std::memcpy(out, src + i2 * a.cin, static_cast<size_t>(krow) * sizeof(bf16));
          out += krow;
          continue;
        }
        for (int64_t kw = 0; kw < w.k[2]; ++kw, out += cg) {
          const int64_t iw = i2 + kw * w.d[2];
          if (iw < 0 || iw >= w.in[2])
            std::memset(out, 0, cbytes);
          else
            std::memcpy(out, src + iw * a.cin, cbytes);
        }
      }
    std::memset(row + k, 0, static_cast<size_t>(a.kpad - k) * sizeof(bf16));
    if (++o2 == w.out[2]) {
      o2 = 0;
      if (++o1 == w.out[1]) o1 = 0, ++o0;
    }
  }
}

// 32 pixels (gathered rows at ga) x 32 output channels (packed block wb) over
// all of K into c [32][32] f32.
inline void block(const AmxConvArgs& a, const bf16* ga, const uint16_t* wb, float* c) {
  const int64_t steps = a.kpad / kAmxK, lda_bytes = a.lda * static_cast<int64_t>(sizeof(bf16));
  const bf16* ga1 = ga + 16 * a.lda;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t s = 0; s < steps; ++s) {
    _tile_loadd(4, ga + s * kAmxK, lda_bytes);
    _tile_loadd(5, ga1 + s * kAmxK, lda_bytes);
    _tile_loadd(6, wb + s * 2 * kAmxTile, 64);
    _tile_loadd(7, wb + s * 2 * kAmxTile + kAmxTile, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  constexpr int64_t ldc = kAmxN * sizeof(float);
  _tile_stored(0, c, ldc);
  _tile_stored(1, c + 16, ldc);
  _tile_stored(2, c + 16 * kAmxN, ldc);
  _tile_stored(3, c + 16 * kAmxN + 16, ldc);
}

// c's first cnt pixels x nc channels: bias, activation K, residual, rounded
// to bf16 at output pixel px (image-flattened) and channel oc0.
template <Act K>
void epilogue(const AmxConvArgs& a, const float* c, int64_t cnt, int nc, int64_t px, int64_t oc0) {
  const int n0 = std::min(nc, 16), n1 = nc - n0;
  Vf b0 = zero(), b1 = zero();
  if (a.bias) {
    b0 = load_any(a.bias, a.bias_t, oc0, n0);
    if (n1 > 0) b1 = load_any(a.bias, a.bias_t, oc0 + 16, n1);
  }
  for (int64_t j = 0; j < cnt; ++j) {
    const int64_t o = (px + j) * a.cout + oc0;
    Vf v0 = act_apply_t<K>(load(c + j * kAmxN) + b0);
    Vf v1 = act_apply_t<K>(load(c + j * kAmxN + 16) + b1);
    if (a.residual) {
      v0 = v0 + load_any(a.residual, a.res_t, o, n0);
      if (n1 > 0) v1 = v1 + load_any(a.residual, a.res_t, o + 16, n1);
    }
    store_n(a.y + o, v0, n0);
    if (n1 > 0) store_n(a.y + o + 16, v1, n1);
  }
}

}  // namespace

// Tasks: (image, group, run of px_per_task pixels). A task gathers its
// pixels once, then walks blocks of output channels whose weights fit
// kBlockBytes, and in each its pixel blocks and channel blocks.
void run(const AmxConvArgs& a) {
  const int64_t P = a.w.out_size();
  const int64_t chunks = (P + a.px_per_task - 1) / a.px_per_task;
  const int64_t nb = (a.cout_g + kAmxN - 1) / kAmxN;  // 32-channel blocks
  const int64_t block_elems = a.kpad * kAmxN;
  const int64_t fit = std::clamp<int64_t>(
      kBlockBytes / (block_elems * static_cast<int64_t>(sizeof(uint16_t))), 1, nb);
  const int64_t group_elems = conv::amx_packed_elems(a.kpad, a.cout_g);
  parallel_tasks(
      a.n * a.groups * chunks,
      [&](int64_t t) {
        const int64_t ch = t % chunks, g = t / chunks % a.groups, n = t / (chunks * a.groups);
        const int64_t m0 = ch * a.px_per_task, cnt = std::min(a.px_per_task, P - m0);
        const int64_t rows = (cnt + kAmxM - 1) / kAmxM * kAmxM;
        bf16* ga = a.gather + static_cast<size_t>(thread_index()) * a.gather_stride;
        gather(a, n, g, m0, cnt, rows, ga);
        configure_tiles();
        alignas(64) float c[kAmxM * kAmxN];
        const uint16_t* wg = a.packed + g * group_elems;
        with_act(a.act, [&](auto kind) {
          for (int64_t b0 = 0; b0 < nb; b0 += fit)
            for (int64_t r = 0; r < rows; r += kAmxM)
              for (int64_t b = b0; b < std::min(nb, b0 + fit); ++b) {
                block(a, ga + r * a.lda, wg + b * block_elems, c);
                const int nc = static_cast<int>(std::min<int64_t>(kAmxN, a.cout_g - b * kAmxN));
                epilogue<decltype(kind)::value>(a, c, std::min<int64_t>(kAmxM, cnt - r), nc,
                                                n * P + m0 + r, g * a.cout_g + b * kAmxN);
              }
        });
        _tile_release();
      },
      a.slots);
}

}  // namespace opsnn::simd::avx512::conv_amx_k

namespace opsnn::conv {
void conv_amx_bf16(const AmxConvArgs& a) { simd::avx512::conv_amx_k::run(a); }
}  // namespace opsnn::conv

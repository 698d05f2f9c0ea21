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

// n bf16 from src to dst, 32 per vector (runs of a few hundred: a libc
// memcpy call per run cost more than the copy).
inline void copy_run(const bf16* src, bf16* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) _mm512_storeu_si512(dst + i, _mm512_loadu_si512(src + i));
  if (i < n) {
    const __mmask32 m = static_cast<__mmask32>((uint64_t{1} << (n - i)) - 1);
    _mm512_mask_storeu_epi16(dst + i, m, _mm512_maskz_loadu_epi16(m, src + i));
  }
}

// Columns [k0, k1) of rows [0, rows) of the task's gather: pixel m0 + j's
// window at k = (tap, ic) as in the packed weight, zeros for padding taps,
// past K and in rows past cnt. Runs that continue in memory (a kernel
// row's taps when one group spans the channels) are copied as one.
void gather(const AmxConvArgs& a, int64_t n, int64_t g, int64_t m0, int64_t cnt, int64_t rows,
            int64_t k0, int64_t k1, bf16* dst) {
  const conv::Window& w = a.w;
  const int64_t cg = a.cin_g, kend = std::min(k1, w.taps() * cg);
  int64_t o0 = m0 / (w.out[1] * w.out[2]), o1 = m0 / w.out[2] % w.out[1], o2 = m0 % w.out[2];
  for (int64_t j = 0; j < rows; ++j) {
    bf16* out = dst + j * a.lda;
    if (j >= cnt) {
      std::memset(out, 0, static_cast<size_t>(k1 - k0) * sizeof(bf16));
      continue;
    }
    const int64_t i0 = o0 * w.s[0] - w.pb[0], i1 = o1 * w.s[1] - w.pb[1],
                  i2 = o2 * w.s[2] - w.pb[2];
    const bf16* run_src = nullptr;  // the pending copy
    bf16* run_dst = out;
    int64_t run_len = 0;
    auto flush = [&] {
      if (run_len) copy_run(run_src, run_dst, run_len);
      run_len = 0;
    };
    // the tap (kd, kh, kw) and channel of k0, then stepped tap by tap
    int64_t ic = k0 % cg, t = k0 / cg;
    int64_t kw = t % w.k[2], kh = t / w.k[2] % w.k[1], kd = t / (w.k[1] * w.k[2]);
    for (int64_t kk = k0; kk < kend; ic = 0) {
      const int64_t len = std::min(cg - ic, kend - kk);
      const int64_t id = i0 + kd * w.d[0], ih = i1 + kh * w.d[1], iw = i2 + kw * w.d[2];
      bf16* d = out + (kk - k0);
      if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1] || iw < 0 || iw >= w.in[2]) {
        flush();
        std::memset(d, 0, static_cast<size_t>(len) * sizeof(bf16));
      } else {
        const bf16* src =
            a.x + (((n * w.in[0] + id) * w.in[1] + ih) * w.in[2] + iw) * a.cin + g * cg + ic;
        if (run_len && src == run_src + run_len) {
          run_len += len;
        } else {
          flush();
          run_src = src;
          run_dst = d;
          run_len = len;
        }
      }
      kk += len;
      if (++kw == w.k[2]) {
        kw = 0;
        if (++kh == w.k[1]) kh = 0, ++kd;
      }
    }
    flush();
    if (kend < k1)
      std::memset(out + std::max<int64_t>(kend - k0, 0), 0,
                  static_cast<size_t>(k1 - std::max(kend, k0)) * sizeof(bf16));
    if (++o2 == w.out[2]) {
      o2 = 0;
      if (++o1 == w.out[1]) o1 = 0, ++o0;
    }
  }
}

// 32 pixels (gathered rows at ga) x 32 output channels (packed block wb)
// over K steps [s0, s1), from zero (first) or the partial sums at cp, to cp
// ([32][32] f32 as four 16 x 16 tiles).
template <class Drain>
inline void block(const AmxConvArgs& a, const bf16* ga, const uint16_t* wb, int64_t s0, int64_t s1,
                  bool first, float* cp, Drain drain) {
  const int64_t lda_bytes = a.lda * static_cast<int64_t>(sizeof(bf16));
  constexpr int64_t ldc = kAmxN * sizeof(float);
  const bf16* ga1 = ga + 16 * a.lda;
  if (first) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  } else {
    _tile_loadd(0, cp, ldc);
    _tile_loadd(1, cp + 16, ldc);
    _tile_loadd(2, cp + 16 * kAmxN, ldc);
    _tile_loadd(3, cp + 16 * kAmxN + 16, ldc);
  }
  for (int64_t s = s0; s < s1; ++s) {
    _tile_loadd(4, ga + (s - s0) * kAmxK, lda_bytes);
    _tile_loadd(5, ga1 + (s - s0) * kAmxK, lda_bytes);
    _tile_loadd(6, wb + s * 2 * kAmxTile, 64);
    _tile_loadd(7, wb + s * 2 * kAmxTile + kAmxTile, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
    drain();
  }
  _tile_stored(0, cp, ldc);
  _tile_stored(1, cp + 16, ldc);
  _tile_stored(2, cp + 16 * kAmxN, ldc);
  _tile_stored(3, cp + 16 * kAmxN + 16, ldc);
}

// A finished block waiting for its epilogue: c's first cnt pixels x nc
// channels get bias, activation, residual and are rounded to bf16 at output
// pixel px (image-flattened) and channel oc0; rows before `row` are done.
struct Pending {
  const float* c = nullptr;
  int64_t cnt = 0, px = 0, oc0 = 0, row = 0;
  int nc = 0;
};

// Rows [p.row, p.row + count) of p's epilogue (activation K).
template <Act K>
void epilogue_rows(const AmxConvArgs& a, Pending& p, int64_t count) {
  const int64_t j1 = std::min(p.cnt, p.row + count);
  if (p.row >= j1) return;
  const int n0 = std::min(p.nc, 16), n1 = p.nc - n0;
  Vf b0 = zero(), b1 = zero();
  if (a.bias) {
    b0 = load_any(a.bias, a.bias_t, p.oc0, n0);
    if (n1 > 0) b1 = load_any(a.bias, a.bias_t, p.oc0 + 16, n1);
  }
  for (int64_t j = p.row; j < j1; ++j) {
    const int64_t o = (p.px + j) * a.cout + p.oc0;
    Vf v0 = act_apply_t<K>(load(p.c + j * kAmxN) + b0);
    Vf v1 = act_apply_t<K>(load(p.c + j * kAmxN + 16) + b1);
    if (a.residual) {
      v0 = v0 + load_any(a.residual, a.res_t, o, n0);
      if (n1 > 0) v1 = v1 + load_any(a.residual, a.res_t, o + 16, n1);
    }
    store_n(a.y + o, v0, n0);
    if (n1 > 0) store_n(a.y + o + 16, v1, n1);
  }
  p.row = j1;
}

}  // namespace

// Tasks: (image, group, run of px_per_task pixels, part of the output
// channels). A task walks K in blocks of k_block, gathering its pixels'
// columns of each block just before it: the 32-pixel slices of the gathered
// rows stay in L1 while the channel blocks' weights for that K block stream
// from L2, the sums kept in the slot's f32 scratch between K blocks (stored
// and loaded exactly: the K blocking does not change a sum). After the last
// K block the epilogue writes the outputs, interleaved with the next
// block's products.
void run(const AmxConvArgs& a) {
  const int64_t P = a.w.out_size();
  const int64_t chunks = (P + a.px_per_task - 1) / a.px_per_task;
  const int64_t nb = (a.cout_g + kAmxN - 1) / kAmxN;  // 32-channel blocks
  const int64_t per_part = (nb + a.oc_parts - 1) / a.oc_parts;
  const int64_t block_elems = a.kpad * kAmxN, steps = a.kpad / kAmxK;
  const int64_t kb = a.k_block / kAmxK;
  const int64_t group_elems = conv::amx_packed_elems(a.kpad, a.cout_g);
  parallel_tasks(
      a.n * a.groups * chunks * a.oc_parts,
      [&](int64_t t) {
        const int64_t part = t % a.oc_parts, ch = t / a.oc_parts % chunks;
        const int64_t g = t / (a.oc_parts * chunks) % a.groups;
        const int64_t n = t / (a.oc_parts * chunks * a.groups);
        const int64_t b0 = part * per_part, b1 = std::min(nb, b0 + per_part);
        if (b0 >= b1) return;
        const int64_t m0 = ch * a.px_per_task, cnt = std::min(a.px_per_task, P - m0);
        const int64_t rows = (cnt + kAmxM - 1) / kAmxM * kAmxM;
        const size_t slot = static_cast<size_t>(thread_index());
        bf16* ga = a.gather + slot * a.gather_stride;
        float* sums = a.sums + slot * a.sums_stride;
        configure_tiles();
        alignas(64) float one[2][kAmxM * kAmxN];  // one K block: sums of this and the last block
        int flip = 0;
        const uint16_t* wg = a.packed + g * group_elems;
        with_act(a.act, [&](auto kind) {
          constexpr Act K = decltype(kind)::value;
          // The epilogue of the previous block runs a few rows per K step of
          // the next one: the vector units work while the tiles multiply.
          Pending pend;
          for (int64_t s0 = 0; s0 < steps; s0 += kb) {
            const int64_t s1 = std::min(steps, s0 + kb);
            const int64_t per_step = (kAmxM + (s1 - s0) - 1) / (s1 - s0);
            gather(a, n, g, m0, cnt, rows, s0 * kAmxK, s1 * kAmxK, ga);
            for (int64_t r = 0; r < rows; r += kAmxM)
              for (int64_t b = b0; b < b1; ++b) {
                // one K block: the sums go straight to the epilogue (an L1
                // buffer; the stem, K = 64, is mostly epilogue)
                float* cp = kb >= steps ? one[flip ^= 1]
                                        : sums + (r / kAmxM * per_part + (b - b0)) * kAmxM * kAmxN;
                block(a, ga + r * a.lda, wg + b * block_elems, s0, s1, s0 == 0, cp,
                      [&] { epilogue_rows<K>(a, pend, per_step); });
                if (s1 < steps) continue;
                epilogue_rows<K>(a, pend, kAmxM);  // what the steps left
                pend.c = cp;
                pend.cnt = std::min<int64_t>(kAmxM, cnt - r);
                pend.nc = static_cast<int>(std::min<int64_t>(kAmxN, a.cout_g - b * kAmxN));
                pend.px = n * P + m0 + r;
                pend.oc0 = g * a.cout_g + b * kAmxN;
                pend.row = 0;
              }
          }
          epilogue_rows<K>(a, pend, kAmxM);
        });
        _tile_release();
      },
      a.slots);
}

}  // namespace opsnn::simd::avx512::conv_amx_k

namespace opsnn::conv {
void conv_amx_bf16(const AmxConvArgs& a) { simd::avx512::conv_amx_k::run(a); }
}  // namespace opsnn::conv

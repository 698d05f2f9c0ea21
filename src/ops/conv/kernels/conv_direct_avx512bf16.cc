// The direct convolution in bf16 with vdpbf16ps (see conv_direct.h): a
// register tile of 14 output pixels x 32 output channels; each step
// broadcasts one pair of input channels per pixel (a 32-bit word) and takes
// its dot product with two packed weight vectors of channel pairs.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/simd/vec_avx512.h"
#include "ops/conv/conv_direct.h"
#include "opsnn/cpu.h"
#include "opsnn/thread_pool.h"

namespace opsnn::simd::avx512::conv_bf16_k {
namespace {

using conv::DirectBf16Args;
using gemm::Act;

// The shared activations (src/kernels/act), as in the GEMM epilogue.
#include "kernels/act/act_vec.inc"

inline Vf load_any(const void* p, DType t, int64_t i, int n) {
  return t == DType::bf16 ? load_n(static_cast<const bf16*>(p) + i, n)
                          : load_n(static_cast<const float*>(p) + i, n);
}

constexpr int kTm = 14, kNr = 32;
constexpr int64_t kPanelBytes = 512 << 10;  // weights of one channel block
constexpr int64_t kTilesPerTask = 8;
constexpr int64_t kRowTileMin = 8;  // output row width for row tiles (run())

// The bias of the panel's n0 + n1 output channels from oc0 (zeros without one).
inline void panel_bias(const DirectBf16Args& a, int64_t oc0, int n0, int n1, Vf& b0, Vf& b1) {
  b0 = b1 = zero();
  if (!a.bias) return;
  b0 = load_any(a.bias, a.bias_t, oc0, n0);
  if (n1 > 0) b1 = load_any(a.bias, a.bias_t, oc0 + 16, n1);
}

// The finished tile (bias, activation, residual) from its staged f32 sums
// into y. Out of line and reading the stage: the K loop's accumulators are
// then never read by a run-time index (which made GCC keep them in memory
// in the f32 kernel).
[[gnu::noinline]] void finish_staged(const DirectBf16Args& a, int64_t n, int64_t m0, int cnt,
                                     int64_t g, int64_t pnl, const float* stage) {
  const int64_t oc0 = g * a.cout_g + pnl * kNr;
  const int nc = static_cast<int>(std::min<int64_t>(kNr, a.cout_g - pnl * kNr));
  const int n0 = std::min(nc, 16), n1 = nc - n0;
  Vf b0, b1;
  panel_bias(a, oc0, n0, n1, b0, b1);
  const int64_t obase = n * a.w.out_size();
  with_act(a.act, [&](auto kind) {
    for (int j = 0; j < cnt; ++j) {
      const int64_t o = (obase + m0 + j) * a.cout + oc0;
      Vf v0 = act_apply_t<decltype(kind)::value>(load(stage + j * kNr) + b0);
      Vf v1 = act_apply_t<decltype(kind)::value>(load(stage + j * kNr + 16) + b1);
      if (a.residual) {
        v0 = v0 + load_any(a.residual, a.res_t, o, n0);
        if (n1 > 0) v1 = v1 + load_any(a.residual, a.res_t, o + 16, n1);
      }
      if (nc == kNr) {
        // One vcvtne2ps2bf16 and one store; the masked vpmovdw stores took
        // 40% of this function on Zen 4. Like the GEMM's bf16 output
        // (store_bf16_out) it flushes an f32 denormal to a signed zero.
        const auto h = (__m512i)_mm512_cvtne2ps_pbh(v1.v, v0.v);
        if (a.stream)
          _mm512_stream_si512(reinterpret_cast<__m512i*>(a.y + o), h);
        else
          _mm512_storeu_si512(a.y + o, h);
        continue;
      }
      store_n(a.y + o, v0, n0);
      if (n1 > 0) store_n(a.y + o + 16, v1, n1);
    }
  });
}

// One register tile's pixels [m0, m0 + cnt) of image n, group g, and the
// input pair each pixel reads for every tap (the zero row in padding), built
// once for all the panels the tile runs (f32 kernel: TileGeo).
struct TileRows {
  int64_t n = 0, g = 0, m0 = 0;
  int cnt = 0;
  int64_t i0[kTm], i1[kTm], i2[kTm], org[kTm];
  bool inside[kTm];
  bool table = false;  // tab holds every tap (taps <= kDirectMaxTaps)
  const bf16* tab[conv::kDirectMaxTaps][kTm];
  uint8_t skip[conv::kDirectMaxTaps];  // per tap: conv::tap_skip
};

// The rows of the tile's pixels for the tap at (dilated) offsets kd, kh, kw.
void tap_rows(const DirectBf16Args& a, const TileRows& tr, int64_t kd, int64_t kh, int64_t kw,
              const bf16** px) {
  const conv::Window& w = a.w;
  const int64_t toff = ((kd * w.in[1] + kh) * w.in[2] + kw) * a.cin;
  for (int j = 0; j < kTm; ++j) {
    const bool ok = tr.inside[j] || (j < tr.cnt && tr.i0[j] + kd >= 0 && tr.i0[j] + kd < w.in[0] &&
                                     tr.i1[j] + kh >= 0 && tr.i1[j] + kh < w.in[1] &&
                                     tr.i2[j] + kw >= 0 && tr.i2[j] + kw < w.in[2]);
    px[j] = ok ? a.x + tr.org[j] + toff : a.zeros;
  }
}

// Pixel positions stepped from the first (one division per tile), and the
// tap table when the kernel has at most kDirectMaxTaps taps.
void prepare(const DirectBf16Args& a, TileRows& tr) {
  const conv::Window& w = a.w;
  conv::tile_origins(w, tr.n, tr.g, a.cin, a.cin_g, tr.m0, tr.cnt, kTm, tr.i0, tr.i1, tr.i2, tr.org,
                     tr.inside);
  tr.table = w.taps() <= conv::kDirectMaxTaps;
  if (!tr.table) return;
  const int tm = (tr.cnt + 1) / 2 * 2;  // the register rows tile() runs
  for (int64_t kd = 0, t = 0; kd < w.k[0]; ++kd)
    for (int64_t kh = 0; kh < w.k[1]; ++kh)
      for (int64_t kw = 0; kw < w.k[2]; ++kw, ++t) {
        const bf16** px = tr.tab[t];
        tap_rows(a, tr, kd * w.d[0], kh * w.d[1], kw * w.d[2], px);
        tr.skip[t] = conv::tap_skip(px, tr.cnt, tm, a.zeros);
      }
}

constexpr int64_t kPfAhead = 8;  // weight pair rows prefetched ahead into L1
// ... and into L2: a task's first tile over a block of weights not in L2 yet
// (deep layers: 8x8 and 16x16 maps) waited on memory (f32 kernel: kPfFar).
constexpr int64_t kPfFar = 64;

// Pair rows [q0, q1) of one tap: TM broadcast pairs (pixel j's at px[j] +
// 2 q) times two weight vectors (wr, the tap's first pair row).
template <int TM, int J0 = 0, int J1 = TM>
__attribute__((always_inline)) inline void tap_pairs(__m512 (&acc0)[TM], __m512 (&acc1)[TM],
                                                     const bf16* const* px, const uint16_t* wr,
                                                     int64_t q0, int64_t q1) {
  const bf16* p[TM];
#pragma GCC unroll 14
  for (int j = J0; j < J1; ++j) p[j] = px[j];
  wr += q0 * kNr * 2;
  for (int64_t q = q0; q < q1; ++q, wr += kNr * 2) {
    const __m512bh w0 = (__m512bh)_mm512_loadu_si512(wr);
    const __m512bh w1 = (__m512bh)_mm512_loadu_si512(wr + 32);
    __builtin_prefetch(wr + kPfAhead * kNr * 2, 0, 3);
    __builtin_prefetch(wr + kPfAhead * kNr * 2 + 32, 0, 3);
    __builtin_prefetch(wr + kPfFar * kNr * 2, 0, 2);
    __builtin_prefetch(wr + kPfFar * kNr * 2 + 32, 0, 2);
#pragma GCC unroll 14
    for (int j = J0; j < J1; ++j) {
      int32_t pair;
      std::memcpy(&pair, p[j] + 2 * q, sizeof pair);
      const __m512bh b = (__m512bh)_mm512_set1_epi32(pair);
      acc0[j] = _mm512_dpbf16_ps(acc0[j], b, w0);
      acc1[j] = _mm512_dpbf16_ps(acc1[j], b, w1);
    }
  }
}

// One tile's sums for panel pnl over input channels [c0, c1), TM (even, at
// least cnt) register rows: partial sums wait in `part` ([kTm][kNr] f32)
// between channel blocks; after the last, finish_staged.
template <int TM>
void tile_rows(const DirectBf16Args& a, const TileRows& tr, int64_t pnl, int64_t c0, int64_t c1,
               float* part) {
  const conv::Window& w = a.w;
  const int64_t taps = w.taps(), kp = taps * a.cin_g / 2;
  const uint16_t* panel = a.packed + tr.g * a.group_stride + pnl * kp * kNr * 2;
  const bool first = c0 == 0, last = c1 == a.cin_g;
  __m512 acc0[TM], acc1[TM];
#pragma GCC unroll 14
  for (int j = 0; j < TM; ++j) {
    acc0[j] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(part + j * kNr);
    acc1[j] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(part + j * kNr + 16);
  }
  const bf16* own[kTm];
  for (int64_t t = 0; t < taps; ++t) {
    const uint16_t* wt = panel + t * (a.cin_g / 2) * kNr * 2;
    if (!tr.table) {
      tap_rows(a, tr, t / (w.k[1] * w.k[2]) * w.d[0], t / w.k[2] % w.k[1] * w.d[1],
               t % w.k[2] * w.d[2], own);
      tap_pairs<TM>(acc0, acc1, own, wt, c0 / 2, c1 / 2);
      continue;
    }
    // Rows and taps that read only padding are left out (oneDNN skips them
    // too): a row tile at a map's edge, or a 13-pixel tile's 14th row.
    const bf16* const* px = tr.tab[t];
    switch (tr.skip[t]) {
      case 0:
        tap_pairs<TM>(acc0, acc1, px, wt, c0 / 2, c1 / 2);
        break;
      case conv::kSkipFirst:
        tap_pairs<TM, 1>(acc0, acc1, px, wt, c0 / 2, c1 / 2);
        break;
      case conv::kSkipLast:
        tap_pairs<TM, 0, TM - 1>(acc0, acc1, px, wt, c0 / 2, c1 / 2);
        break;
      case conv::kSkipFirst | conv::kSkipLast:
        tap_pairs<TM, 1, TM - 1>(acc0, acc1, px, wt, c0 / 2, c1 / 2);
        break;
      default:
        break;
    }
  }
#pragma GCC unroll 14
  for (int j = 0; j < TM; ++j) {
    _mm512_storeu_ps(part + j * kNr, acc0[j]);
    _mm512_storeu_ps(part + j * kNr + 16, acc1[j]);
  }
  if (last) finish_staged(a, tr.n, tr.m0, tr.cnt, tr.g, pnl, part);
}

// A tile of cnt pixels on the fewest even register rows that hold it: a
// tile of a short row (8 pixels) or a map's last tile then costs its own
// pixels, not a whole 14-row tile (an odd cnt's last row is skipped).
template <int TM = kTm>
void tile(const DirectBf16Args& a, const TileRows& tr, int64_t pnl, int64_t c0, int64_t c1,
          float* part) {
  if constexpr (TM > 2)
    if (tr.cnt <= TM - 2) return tile<TM - 2>(a, tr, pnl, c0, c1, part);
  tile_rows<TM>(a, tr, pnl, c0, c1, part);
}

// Whether copy_rows serves this convolution: one group of 2 or 4 input
// channels (one or two pairs a pixel), unit stride and dilation along the
// row, rows of at least a tile.
bool rows_copy(const DirectBf16Args& a) {
  const conv::Window& w = a.w;
  return a.groups == 1 && (a.cin == 2 || a.cin == 4) && w.s[2] == 1 && w.d[2] == 1 &&
         w.out[2] >= kTm;
}

// Every bit of a 16-bit mask doubled (pixel mask -> 32-bit word mask).
inline uint32_t spread2(uint32_t x) {
  x = (x | x << 8) & 0x00FF00FFu;
  x = (x | x << 4) & 0x0F0F0F0Fu;
  x = (x | x << 2) & 0x33333333u;
  x = (x | x << 1) & 0x55555555u;
  return x | x << 1;
}

// copy_runs where rows_copy holds: a tile's pixels lie on at most two
// output rows, and along a row a tap reads consecutive input pixels, so each
// (tap, row) is one or two masked loads of the row's words (lanes outside
// the row or in the padding zero) and one permute splits the pairs (the
// gathers read every word on its own: 12% of the stem's time; 4->320
// 64x64 0.240-0.256 -> 0.221-0.234 ms, Zen 4, 2 threads).
void copy_rows(const DirectBf16Args& a, int64_t n, int64_t m0, int cnt, uint32_t* at) {
  const conv::Window& w = a.w;
  const int64_t pp = a.cin / 2;  // pairs (words) per pixel
  const int* x = reinterpret_cast<const int*>(a.x) + n * w.in_size() * pp;
  struct Seg {
    int64_t od, oh, ow;  // output position of lane j0
    int j0, j1;
  };
  Seg seg[2];
  int nseg = 0;
  {
    int64_t od = m0 / (w.out[1] * w.out[2]), oh = m0 / w.out[2] % w.out[1], ow = m0 % w.out[2];
    for (int j = 0; j < cnt;) {
      const int len = static_cast<int>(std::min<int64_t>(cnt - j, w.out[2] - ow));
      seg[nseg++] = {od, oh, ow, j, j + len};
      j += len;
      ow = 0;
      if (++oh == w.out[1]) oh = 0, ++od;
    }
  }
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  uint32_t* dst = at;
  for (int64_t kd = 0; kd < w.k[0]; ++kd)
    for (int64_t kh = 0; kh < w.k[1]; ++kh)
      for (int64_t kw = 0; kw < w.k[2]; ++kw, dst += pp * kTm) {
        __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
        for (int si = 0; si < nseg; ++si) {
          const Seg& sg = seg[si];
          const int64_t id = sg.od * w.s[0] - w.pb[0] + kd * w.d[0];
          const int64_t ih = sg.oh * w.s[1] - w.pb[1] + kh * w.d[1];
          if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) continue;
          // Lane j reads input column c0 + j (c0 may be negative).
          const int64_t c0 = sg.ow - w.pb[2] + kw - sg.j0;
          const int64_t jl = std::max<int64_t>(sg.j0, -c0);
          const int64_t jh = std::min<int64_t>(sg.j1, w.in[2] - c0);
          if (jl >= jh) continue;
          const auto m = static_cast<uint32_t>(((1u << jh) - 1) & ~((1u << jl) - 1));
          // Masked-off lanes are not read (no fault before the row's first
          // pixel); the address is formed as an integer for that reason.
          const auto addr = reinterpret_cast<uintptr_t>(x) +
                            static_cast<uintptr_t>(((id * w.in[1] + ih) * w.in[2] + c0) * pp * 4);
          const auto* p = reinterpret_cast<const int*>(addr);
          if (pp == 1) {
            lo = _mm512_or_si512(lo, _mm512_maskz_loadu_epi32(static_cast<__mmask16>(m), p));
          } else {
            const uint32_t wm = spread2(m);
            const auto* p16 = reinterpret_cast<const int*>(addr + 64);
            lo = _mm512_or_si512(lo, _mm512_maskz_loadu_epi32(static_cast<__mmask16>(wm), p));
            hi = _mm512_or_si512(hi,
                                 _mm512_maskz_loadu_epi32(static_cast<__mmask16>(wm >> 16), p16));
          }
        }
        if (pp == 1) {
          _mm512_mask_storeu_epi32(dst, 0x3FFF, lo);
        } else {
          _mm512_mask_storeu_epi32(dst, 0x3FFF, _mm512_permutex2var_epi32(lo, even, hi));
          _mm512_mask_storeu_epi32(dst + kTm, 0x3FFF, _mm512_permutex2var_epi32(lo, odd, hi));
        }
      }
}

// The runs path (DirectBf16Args::runs, few input channels: the UNet's stem).
// Pixel j's channel pairs of tap t go to at[(t * cin_g / 2 + c) * kTm + j],
// zeros where the tap falls in the padding or j >= cnt: the order of the
// packed weight rows, so each panel runs one loop over the copy. One masked
// 32-bit gather per (tap, pair) collects the pair for all 14 pixels (the
// scalar copy, pixel by pixel, was a third of the stem's time); indices are
// in pairs from the image's first pair of the group (ConvPlan keeps an
// image's input under 2^31 pairs).
void copy_runs(const DirectBf16Args& a, int64_t n, int64_t g, int64_t m0, int cnt, uint32_t* at) {
  const conv::Window& w = a.w;
  const int64_t cp = a.cin_g / 2;
  alignas(64) int32_t i0[16] = {}, i1[16] = {}, i2[16] = {};
  // The first pixel's position by division, the next ones by stepping.
  int64_t od = m0 / (w.out[1] * w.out[2]), oh = m0 / w.out[2] % w.out[1], ow = m0 % w.out[2];
  for (int j = 0; j < cnt; ++j) {
    i0[j] = static_cast<int32_t>(od * w.s[0] - w.pb[0]);
    i1[j] = static_cast<int32_t>(oh * w.s[1] - w.pb[1]);
    i2[j] = static_cast<int32_t>(ow * w.s[2] - w.pb[2]);
    if (++ow == w.out[2]) {
      ow = 0;
      if (++oh == w.out[1]) {
        oh = 0;
        ++od;
      }
    }
  }
  const __m512i v0 = _mm512_load_si512(i0), v1 = _mm512_load_si512(i1), v2 = _mm512_load_si512(i2);
  const auto in1 = static_cast<int32_t>(w.in[1]), in2 = static_cast<int32_t>(w.in[2]);
  const auto pix_pairs = static_cast<int32_t>(a.cin / 2);
  // A pixel's first pair: ((i0 * in1 + i1) * in2 + i2) * cin / 2.
  const __m512i org = _mm512_mullo_epi32(
      _mm512_add_epi32(
          _mm512_mullo_epi32(_mm512_add_epi32(_mm512_mullo_epi32(v0, _mm512_set1_epi32(in1)), v1),
                             _mm512_set1_epi32(in2)),
          v2),
      _mm512_set1_epi32(pix_pairs));
  const __mmask16 live = static_cast<__mmask16>((1u << cnt) - 1);
  const auto* base = reinterpret_cast<const int*>(a.x + n * w.in_size() * a.cin + g * a.cin_g);
  auto in_range = [](__m512i v, int64_t off, int64_t size) {
    const __m512i c = _mm512_add_epi32(v, _mm512_set1_epi32(static_cast<int32_t>(off)));
    return static_cast<__mmask16>(
        _mm512_cmpge_epi32_mask(c, _mm512_setzero_si512()) &
        _mm512_cmplt_epi32_mask(c, _mm512_set1_epi32(static_cast<int32_t>(size))));
  };
  uint32_t* dst = at;
  for (int64_t kd = 0; kd < w.k[0]; ++kd) {
    const __mmask16 md = live & in_range(v0, kd * w.d[0], w.in[0]);
    for (int64_t kh = 0; kh < w.k[1]; ++kh) {
      const __mmask16 mh = md & in_range(v1, kh * w.d[1], w.in[1]);
      for (int64_t kw = 0; kw < w.k[2]; ++kw) {
        const __mmask16 m = mh & in_range(v2, kw * w.d[2], w.in[2]);
        const int64_t toff =
            ((kd * w.d[0] * w.in[1] + kh * w.d[1]) * w.in[2] + kw * w.d[2]) * a.cin / 2;
        const __m512i idx = _mm512_add_epi32(org, _mm512_set1_epi32(static_cast<int32_t>(toff)));
        for (int64_t c = 0; c < cp; ++c, dst += kTm) {
          const __m512i v = _mm512_mask_i32gather_epi32(
              _mm512_setzero_si512(), m,
              _mm512_add_epi32(idx, _mm512_set1_epi32(static_cast<int32_t>(c))), base, 4);
          _mm512_mask_storeu_epi32(dst, 0x3FFF, v);
        }
      }
    }
  }
}

// Every panel of one tile over its copied pairs: per panel one loop of kp
// steps (14 broadcast pairs, two weight vectors, 28 dot products).
void runs_panels(const DirectBf16Args& a, int64_t n, int64_t g, int64_t m0, int cnt,
                 const uint32_t* at) {
  const int64_t kp = a.w.taps() * a.cin_g / 2;
  const bool plain = a.act == Act::none && !a.residual;
  alignas(64) float stage[kTm * kNr];
  const int64_t npan = (a.cout_g + kNr - 1) / kNr;
  for (int64_t pnl = 0; pnl < npan; ++pnl) {
    const uint16_t* panel = a.packed + g * a.group_stride + pnl * kp * kNr * 2;
    __m512 acc0[kTm], acc1[kTm];
#pragma GCC unroll 14
    for (int j = 0; j < kTm; ++j) acc0[j] = acc1[j] = _mm512_setzero_ps();
    for (int64_t q = 0; q < kp; ++q) {
      const __m512bh w0 = (__m512bh)_mm512_loadu_si512(panel + q * kNr * 2);
      const __m512bh w1 = (__m512bh)_mm512_loadu_si512(panel + q * kNr * 2 + 32);
      const uint32_t* aq = at + q * kTm;
#pragma GCC unroll 14
      for (int j = 0; j < kTm; ++j) {
        const __m512bh b = (__m512bh)_mm512_set1_epi32(static_cast<int>(aq[j]));
        acc0[j] = _mm512_dpbf16_ps(acc0[j], b, w0);
        acc1[j] = _mm512_dpbf16_ps(acc1[j], b, w1);
      }
    }
    if (plain && (pnl + 1) * kNr <= a.cout_g) {
      // No activation or residual, a whole panel: the bias added and the
      // tile rounded and stored from the registers (staged, this epilogue
      // was a quarter of the stem's time).
      const int64_t oc0 = g * a.cout_g + pnl * kNr;
      Vf b0, b1;
      panel_bias(a, oc0, 16, 16, b0, b1);
      bf16* y = a.y + (n * a.w.out_size() + m0) * a.cout + oc0;
#pragma GCC unroll 14
      for (int j = 0; j < kTm; ++j) {
        if (j >= cnt) break;
        const __m512bh h =
            _mm512_cvtne2ps_pbh(_mm512_add_ps(acc1[j], b1.v), _mm512_add_ps(acc0[j], b0.v));
        if (a.stream)
          _mm512_stream_si512(reinterpret_cast<__m512i*>(y + j * a.cout), (__m512i)h);
        else
          _mm512_storeu_si512(y + j * a.cout, (__m512i)h);
      }
      continue;
    }
#pragma GCC unroll 14
    for (int j = 0; j < kTm; ++j) {
      _mm512_store_ps(stage + j * kNr, acc0[j]);
      _mm512_store_ps(stage + j * kNr + 16, acc1[j]);
    }
    finish_staged(a, n, m0, cnt, g, pnl, stage);
  }
}

// Tasks over (image, group, run of tiles); each tile's pairs are copied
// once and every panel runs on them (the weights of all panels are small:
// at most kDirectBf16RunPairs pairs x cout).
void run_runs(const DirectBf16Args& a) {
  const int64_t P = a.w.out_size();
  const int64_t ntiles = (P + kTm - 1) / kTm;
  const int64_t nchunks = (ntiles + kTilesPerTask - 1) / kTilesPerTask;
  const bool by_rows = rows_copy(a);
  parallel_tasks(a.n * a.groups * nchunks, [&](int64_t t) {
    alignas(64) uint32_t at[conv::kDirectBf16RunPairs * kTm];
    const int64_t ch = t % nchunks, g = t / nchunks % a.groups, n = t / (nchunks * a.groups);
    const int64_t tile1 = std::min(ntiles, (ch + 1) * kTilesPerTask);
    for (int64_t ti = ch * kTilesPerTask; ti < tile1; ++ti) {
      const int64_t m0 = ti * kTm;
      const int cnt = static_cast<int>(std::min<int64_t>(kTm, P - m0));
      if (by_rows)
        copy_rows(a, n, m0, cnt, at);
      else
        copy_runs(a, n, g, m0, cnt, at);
      runs_panels(a, n, g, m0, cnt, at);
    }
    if (a.stream) _mm_sfence();
  });
}

}  // namespace

// Tasks as in the f32 kernel (conv_direct_impl.h run()): (image, group, run
// of panels, run of tiles); a task takes as many panels as keep their
// weights within half of L2, so each tile's tap table is built once for
// them. With more than one input-channel block a task runs one panel (its
// partial sums wait in `part`, one stage per tile).
void run(const DirectBf16Args& a) {
  if (a.runs) return run_runs(a);
  const int64_t P = a.w.out_size();
  const int64_t npan_all = (a.cout_g + kNr - 1) / kNr;
  // Each tile within one output row (conv::PixelTiles by rows) where a
  // row has kRowTileMin pixels or more: the taps of a row's first and last
  // pixel, and of the map's first and last rows, that read only padding are
  // then skipped whole (prepare), not multiplied by the zero row. Zen 4,
  // 2 threads, ms: 1280->1280 8x8 4.18-4.33 -> 3.62-3.80, 16x16
  // 17.0-17.35 -> 16.57-16.70, 640->640 32x32 16.60-16.63 -> 16.24-16.44,
  // 320->320 64x64 16.75-16.86 -> 16.47-16.52, 256->256 256x256 172.6-174.5
  // -> 171.0-173.1.
  const int64_t W = a.w.out[2];
  const bool rowt = a.w.taps() <= conv::kDirectMaxTaps && W >= kRowTileMin;
  const conv::PixelTiles tiles(P, W, kTm, rowt);
  const int64_t ntiles = tiles.count();
  const double in_bytes = static_cast<double>(a.w.in_size()) * static_cast<double>(a.cin);
  const double w_bytes =
      static_cast<double>(a.w.taps()) * static_cast<double>(a.cin_g) * static_cast<double>(a.cout);
  const bool pixels_outer = in_bytes > w_bytes;
  const int64_t nchunks = (ntiles + kTilesPerTask - 1) / kTilesPerTask;
  // Input-channel blocks: as few as keep a panel's block of weights within
  // kPanelBytes (L2), of equal size (even, for the bf16 channel pairs).
  const int64_t panel_bytes = a.w.taps() * a.cin_g * static_cast<int64_t>(2 * kNr);
  const int64_t nblk = std::max<int64_t>(1, (panel_bytes + kPanelBytes - 1) / kPanelBytes);
  const int64_t cb = ((a.cin_g + nblk - 1) / nblk + 1) / 2 * 2;
  const int64_t budget = static_cast<int64_t>(cpu_info().l2_bytes / 2);
  const int64_t fit =
      nblk > 1 ? 1 : std::clamp<int64_t>(budget / std::max<int64_t>(panel_bytes, 1), 1, npan_all);
  const int64_t pruns = (npan_all + fit - 1) / fit;
  const int64_t ppt = (npan_all + pruns - 1) / pruns;  // panels per task
  const int64_t npan = (npan_all + ppt - 1) / ppt;
  parallel_tasks(a.n * a.groups * npan * nchunks, [&](int64_t t) {
    alignas(64) float part[kTilesPerTask][kTm * kNr];
    const int64_t inner = t % (npan * nchunks);
    const int64_t ch = pixels_outer ? inner / npan : inner % nchunks;
    const int64_t pr = pixels_outer ? inner % npan : inner / nchunks;
    const int64_t pnl0 = pr * ppt, pnl1 = std::min(npan_all, pnl0 + ppt);
    TileRows tr;
    tr.g = t / (nchunks * npan) % a.groups;
    tr.n = t / (nchunks * npan * a.groups);
    const int64_t tile0 = ch * kTilesPerTask, tile1 = std::min(ntiles, tile0 + kTilesPerTask);
    for (int64_t c0 = 0; c0 < a.cin_g; c0 += cb) {
      const int64_t c1 = std::min(a.cin_g, c0 + cb);
      for (int64_t ti = tile0; ti < tile1; ++ti) {
        tiles.at(ti, tr.m0, tr.cnt);
        prepare(a, tr);
        for (int64_t pnl = pnl0; pnl < pnl1; ++pnl) tile(a, tr, pnl, c0, c1, part[ti - tile0]);
      }
    }
    if (a.stream) _mm_sfence();
  });
}

}  // namespace opsnn::simd::avx512::conv_bf16_k

namespace opsnn::conv {
void direct_bf16_avx512bf16(const DirectBf16Args& a) { simd::avx512::conv_bf16_k::run(a); }
}  // namespace opsnn::conv

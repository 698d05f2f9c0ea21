// The direct convolution written once over the vec_*.h names; included by
// conv_direct_{avx2,avx512}.cc inside their ISA namespace.

namespace conv_direct_k {

using conv::DirectArgs;
using gemm::Act;

// The shared activations (src/kernels/act), as in the GEMM epilogue.
#include "kernels/act/act_vec.inc"
inline Vf act_vec(Vf x, Act a) { return act_apply(x, a); }

inline constexpr int kTm = kLanes == 16 ? 14 : 6;  // pixels per register tile
inline constexpr int kNr = 2 * kLanes;
inline constexpr int64_t kPanelBytes = 512 << 10;  // weights of one channel block
inline constexpr int64_t kTilesPerTask = 8;
inline constexpr int64_t kPfAhead = 8;  // weight rows prefetched ahead (from L2)

// Output pixels [m0, m0 + cnt) (flattened over od, oh, ow) of image n,
// output channels of panel `pnl` of group g, input channels [c0, c1):
// starts from zero (first block) or the partial sums in y, and applies the
// epilogue after the last block.
inline void tile(const DirectArgs& a, int64_t n, int64_t m0, int cnt, int64_t g, int64_t pnl,
                 int64_t c0, int64_t c1) {
  const conv::Window& w = a.w;
  const int64_t taps = w.taps();
  const float* panel = a.packed + g * a.group_stride + pnl * taps * a.cin_g * kNr;
  const int64_t oc0 = g * a.cout_g + pnl * kNr;
  const int nc = static_cast<int>(std::min<int64_t>(kNr, a.cout_g - pnl * kNr));
  const int n0 = std::min(nc, kLanes), n1 = nc - n0;
  const bool first = c0 == 0, last = c1 == a.cin_g;
  const int64_t obase = n * w.out_size();
  Vf acc0[kTm], acc1[kTm];
  // Per pixel: the input offset of its window's origin (tap 0 without
  // dilation offsets) and whether every tap of the window is inside the
  // input (then a tap's pointer is origin + the tap's offset).
  int64_t i0[kTm], i1[kTm], i2[kTm], org[kTm];
  bool inside[kTm];
  {
    const int64_t m = m0;
    int64_t o0 = m / (w.out[1] * w.out[2]), o1 = m / w.out[2] % w.out[1], o2 = m % w.out[2];
    for (int j = 0; j < kTm; ++j) {
      i0[j] = o0 * w.s[0] - w.pb[0];
      i1[j] = o1 * w.s[1] - w.pb[1];
      i2[j] = o2 * w.s[2] - w.pb[2];
      org[j] = (((n * w.in[0] + i0[j]) * w.in[1] + i1[j]) * w.in[2] + i2[j]) * a.cin + g * a.cin_g;
      inside[j] = j < cnt && i0[j] >= 0 && i0[j] + (w.k[0] - 1) * w.d[0] < w.in[0] && i1[j] >= 0 &&
                  i1[j] + (w.k[1] - 1) * w.d[1] < w.in[1] && i2[j] >= 0 &&
                  i2[j] + (w.k[2] - 1) * w.d[2] < w.in[2];
      if (j + 1 < cnt && ++o2 == w.out[2]) {
        o2 = 0;
        if (++o1 == w.out[1]) o1 = 0, ++o0;
      }
      if (first || j >= cnt) {
        acc0[j] = acc1[j] = zero();
      } else {
        const float* o = a.y + (obase + m0 + j) * a.cout + oc0;
        acc0[j] = load_n(o, n0);
        acc1[j] = n1 > 0 ? load_n(o + kLanes, n1) : zero();
      }
    }
  }
  // Input row of each pixel of the tile for tap t (the zero row in padding).
  // kd, kh, kw: the tap's offsets (dilated) from the window's origin.
  auto tap_ptrs = [&](int64_t kd, int64_t kh, int64_t kw, const float** px) {
    const int64_t toff = ((kd * w.in[1] + kh) * w.in[2] + kw) * a.cin;
    for (int j = 0; j < kTm; ++j) {
      const bool ok =
          inside[j] || (j < cnt && i0[j] + kd >= 0 && i0[j] + kd < w.in[0] && i1[j] + kh >= 0 &&
                        i1[j] + kh < w.in[1] && i2[j] + kw >= 0 && i2[j] + kw < w.in[2]);
      px[j] = ok ? a.x + org[j] + toff : a.zeros;
    }
  };
  const bool table = taps <= conv::kDirectMaxTaps;
  const float* tab[conv::kDirectMaxTaps][kTm];
  bool all_inside = true;
  for (int j = 0; j < kTm; ++j) all_inside &= inside[j];
  if (table)
    for (int64_t kd = 0, t = 0; kd < w.k[0]; ++kd)
      for (int64_t kh = 0; kh < w.k[1]; ++kh)
        for (int64_t kw = 0; kw < w.k[2]; ++kw, ++t) {
          if (all_inside) {
            const float* base =
                a.x + ((kd * w.d[0] * w.in[1] + kh * w.d[1]) * w.in[2] + kw * w.d[2]) * a.cin;
            for (int j = 0; j < kTm; ++j) tab[t][j] = base + org[j];
          } else {
            tap_ptrs(kd * w.d[0], kh * w.d[1], kw * w.d[2], tab[t]);
          }
        }
  // One input channel: kTm broadcasts times two weight vectors.
  auto step = [&](const float* const* px, const float* wp, int64_t ic) {
    const Vf w0 = load(wp + ic * kNr), w1 = load(wp + ic * kNr + kLanes);
    __builtin_prefetch(wp + (ic + kPfAhead) * kNr, 0, 3);
    __builtin_prefetch(wp + (ic + kPfAhead) * kNr + kLanes, 0, 3);
#pragma GCC unroll 14
    for (int j = 0; j < kTm; ++j) {
      const Vf b = set1(px[j][ic]);
      acc0[j] = fma(b, w0, acc0[j]);
      acc1[j] = fma(b, w1, acc1[j]);
    }
  };
  const float* own[kTm];
  for (int64_t s0 = c0, s1; s0 < c1; s0 = s1) {
    // Rows of the sub-block starting at channel b start at b * taps; tap t's
    // at + t * len (direct_row).
    const int64_t sb = s0 / a.sub * a.sub, len = std::min(a.sub, a.cin_g - sb);
    s1 = std::min(c1, sb + a.sub);
    const float* wsb = panel + (sb * taps - sb) * kNr;
    for (int64_t t = 0; t < taps; ++t) {
      const float* const* px = tab[table ? t : 0];
      if (!table) {
        tap_ptrs(t / (w.k[1] * w.k[2]) * w.d[0], t / w.k[2] % w.k[1] * w.d[1], t % w.k[2] * w.d[2],
                 own);
        px = own;
      }
      const float* wp = wsb + t * len * kNr;
      for (int64_t ic = s0; ic < s1; ++ic) step(px, wp, ic);
    }
  }
  Vf b0 = zero(), b1 = zero();
  if (last && a.bias) {
    b0 = load_n(a.bias + oc0, n0);
    if (n1 > 0) b1 = load_n(a.bias + oc0 + kLanes, n1);
  }
  for (int j = 0; j < cnt; ++j) {
    const int64_t o = (obase + m0 + j) * a.cout + oc0;
    Vf v0 = acc0[j], v1 = acc1[j];
    if (last) {
      v0 = act_vec(v0 + b0, a.act);
      v1 = act_vec(v1 + b1, a.act);
      if (a.residual) {
        v0 = v0 + load_n(a.residual + o, n0);
        if (n1 > 0) v1 = v1 + load_n(a.residual + o + kLanes, n1);
      }
    }
    if (n0 == kLanes)
      store(a.y + o, v0);
    else
      store_n(a.y + o, v0, n0);
    if (n1 == kLanes)
      store(a.y + o + kLanes, v1);
    else if (n1 > 0)
      store_n(a.y + o + kLanes, v1, n1);
  }
}

// Tasks: (image, group, channel panel, run of kTilesPerTask pixel tiles).
// A task walks the input channels in blocks (its panel's block of weights,
// at most kPanelBytes, stays in L2 across its tiles), keeping partial sums in y between
// blocks. Consecutive tasks share the larger operand: the same pixels (input
// bigger than the weights: large feature maps) or the same panel (weights
// bigger: deep layers). The blocking is fixed by the shape, so outputs never
// depend on the thread count or the task order.
inline void run(const DirectArgs& a) {
  const int64_t P = a.w.out_size();
  const int64_t npan = (a.cout_g + kNr - 1) / kNr;
  const int64_t ntiles = (P + kTm - 1) / kTm;
  const int64_t nchunks = (ntiles + kTilesPerTask - 1) / kTilesPerTask;
  const double in_bytes = static_cast<double>(a.w.in_size()) * static_cast<double>(a.cin);
  const double w_bytes =
      static_cast<double>(a.w.taps()) * static_cast<double>(a.cin_g) * static_cast<double>(a.cout);
  const bool pixels_outer = in_bytes > w_bytes;
  // Input-channel blocks: as few as keep a panel's block of weights within
  // kPanelBytes (L2), of equal size (even, for the bf16 channel pairs).
  const int64_t panel_bytes = a.w.taps() * a.cin_g * static_cast<int64_t>(sizeof(float) * kNr);
  const int64_t nblk = std::max<int64_t>(1, (panel_bytes + kPanelBytes - 1) / kPanelBytes);
  const int64_t unit = a.sub < a.cin_g ? a.sub : 2;
  const int64_t cb = ((a.cin_g + nblk - 1) / nblk + unit - 1) / unit * unit;
  parallel_tasks(a.n * a.groups * npan * nchunks, [&](int64_t t) {
    const int64_t inner = t % (npan * nchunks);
    const int64_t ch = pixels_outer ? inner / npan : inner % nchunks;
    const int64_t pnl = pixels_outer ? inner % npan : inner / nchunks;
    const int64_t g = t / (nchunks * npan) % a.groups, n = t / (nchunks * npan * a.groups);
    const int64_t tile0 = ch * kTilesPerTask, tile1 = std::min(ntiles, tile0 + kTilesPerTask);
    for (int64_t c0 = 0; c0 < a.cin_g; c0 += cb) {
      const int64_t c1 = std::min(a.cin_g, c0 + cb);
      for (int64_t ti = tile0; ti < tile1; ++ti) {
        const int64_t m0 = ti * kTm;
        tile(a, n, m0, static_cast<int>(std::min<int64_t>(kTm, P - m0)), g, pnl, c0, c1);
      }
    }
  });
}

}  // namespace conv_direct_k

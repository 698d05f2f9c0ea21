// The direct convolution written once over the vec_*.h names; included by
// conv_direct_{avx2,avx512}.cc inside their ISA namespace.

namespace conv_direct_k {

using conv::DirectArgs;
using gemm::Act;

// The shared activations (src/kernels/act), as in the GEMM epilogue.
#include "kernels/act/act_vec.inc"

inline constexpr int kTm = kLanes == 16 ? 14 : 6;  // pixels per register tile
inline constexpr int kNr = 2 * kLanes;
inline constexpr int64_t kPanelBytes = 512 << 10;  // weights of one channel block
inline constexpr int64_t kTilesPerTask = 8;
inline constexpr int64_t kTilesPerPanelTask = 48;
inline constexpr int64_t kPfAhead = 8;  // weight rows prefetched ahead (from L2)
// ... and into L2 from memory: the first tile over a block of weights that
// are not in L2 yet (deep layers, 8x8 and 16x16 maps) waited on memory.
inline constexpr int64_t kPfFar = 64;
inline constexpr int64_t kRunFloats = 2048;  // TileGeo::runs
inline constexpr int64_t kRowTileMin = 8;    // output row width for row tiles (run())

// One register tile: output pixels [m0, m0 + cnt) (flattened over od, oh,
// ow) of image n and group g, and the input row each pixel reads for every
// tap (the zero row in padding), built once for all the tile's panels.
struct TileGeo {
  int64_t n = 0, g = 0, m0 = 0;
  int cnt = 0;
  // Per pixel: the input offset of its window's origin (tap 0 without
  // dilation offsets) and whether every tap of the window is inside the
  // input (then a tap's row is origin + the tap's offset).
  int64_t i0[kTm], i1[kTm], i2[kTm], org[kTm];
  bool inside[kTm];
  bool table = false;     // tab holds every tap (taps <= kDirectMaxTaps)
  bool row_runs = false;  // one contiguous run per kernel row (see accumulate)
  const float* tab[conv::kDirectMaxTaps][kTm];
  uint8_t skip[conv::kDirectMaxTaps];  // per tap: conv::tap_skip
  // Runs of the pixels whose window crosses the W padding, zeros in place
  // of the missing columns (row_runs with few channels: the UNet's stem).
  float runs[kRunFloats];
  // row_runs with every run in kRunFloats: the tile's inputs in the order
  // the kernel reads them, element e of the kernel rows' runs for pixel j at
  // a_tile[e * kTm + j] (a GEMM A panel), built once for all the panels.
  bool packed = false;
  float a_tile[kRunFloats];
};

// The rows of the tile's pixels for the tap at offsets (kd, kh, kw)
// (dilated) from the window's origin.
inline void tap_ptrs(const DirectArgs& a, const TileGeo& tg, int64_t kd, int64_t kh, int64_t kw,
                     const float** px) {
  const conv::Window& w = a.w;
  const int64_t toff = ((kd * w.in[1] + kh) * w.in[2] + kw) * a.cin;
  for (int j = 0; j < kTm; ++j) {
    const bool ok = tg.inside[j] || (j < tg.cnt && tg.i0[j] + kd >= 0 && tg.i0[j] + kd < w.in[0] &&
                                     tg.i1[j] + kh >= 0 && tg.i1[j] + kh < w.in[1] &&
                                     tg.i2[j] + kw >= 0 && tg.i2[j] + kw < w.in[2]);
    px[j] = ok ? a.x + tg.org[j] + toff : a.zeros;
  }
}

// Pixels whose window leaves the input along W: each kernel row's run
// copied with zeros for the missing columns (rows in the H/D padding keep
// the zero row).
inline void copy_runs(const DirectArgs& a, TileGeo& tg, int64_t rows, int64_t run) {
  const conv::Window& w = a.w;
  float* buf = tg.runs;
  for (int j = 0; j < tg.cnt; ++j) {
    if (tg.i2[j] >= 0 && tg.i2[j] + w.k[2] <= w.in[2]) continue;
    for (int64_t r = 0; r < rows; ++r, buf += run) {
      const int64_t kd = r / w.k[1] * w.d[0], kh = r % w.k[1] * w.d[1];
      const float*& p = tg.tab[r * w.k[2]][j];
      if (tg.i0[j] + kd < 0 || tg.i0[j] + kd >= w.in[0] || tg.i1[j] + kh < 0 ||
          tg.i1[j] + kh >= w.in[1])
        continue;  // the kernel row is in the H/D padding: the zero row
      for (int64_t kw = 0; kw < w.k[2]; ++kw) {
        const int64_t col = tg.i2[j] + kw;
        float* dst = buf + kw * a.cin_g;
        if (col < 0 || col >= w.in[2]) {
          std::fill(dst, dst + a.cin_g, 0.0f);
        } else {
          const float* src = a.x + (tg.org[j] + ((kd * w.in[1] + kh) * w.in[2] + kw) * a.cin);
          std::copy(src, src + a.cin_g, dst);
        }
      }
      p = buf;
    }
  }
}

// Whether a kernel row's taps read one contiguous run of k2 * cin_g inputs
// (one group spanning all of a pixel's channels, one sub-block, unit
// dilation along W), and whether a tile's runs of every kernel row fit
// kRunFloats, so that its inputs are packed once for all its panels
// (TileGeo::row_runs, packed; the UNet's stem).
inline bool row_runs_ok(const DirectArgs& a) {
  return a.w.taps() <= conv::kDirectMaxTaps && a.sub == a.cin_g && a.cin == a.cin_g &&
         a.w.d[2] == 1;
}
inline bool runs_fit(const DirectArgs& a) { return kTm * a.w.taps() * a.cin_g <= kRunFloats; }

inline void prepare(const DirectArgs& a, TileGeo& tg) {
  const conv::Window& w = a.w;
  conv::tile_origins(w, tg.n, tg.g, a.cin, a.cin_g, tg.m0, tg.cnt, kTm, tg.i0, tg.i1, tg.i2, tg.org,
                     tg.inside);
  bool all_inside = true, w_inside = true;
  for (int j = 0; j < kTm; ++j) {
    all_inside &= tg.inside[j];
    if (j < tg.cnt) w_inside &= tg.i2[j] >= 0 && tg.i2[j] + w.k[2] <= w.in[2];
  }
  tg.table = w.taps() <= conv::kDirectMaxTaps;
  const int64_t run = w.k[2] * a.cin_g, rows = w.taps() / w.k[2];
  tg.row_runs = row_runs_ok(a) && (w_inside || runs_fit(a));
  if (!tg.table) return;
  const int tm = (tg.cnt + 1) / 2 * 2;  // the register rows accumulate() runs
  for (int64_t kd = 0, t = 0; kd < w.k[0]; ++kd)
    for (int64_t kh = 0; kh < w.k[1]; ++kh)
      for (int64_t kw = 0; kw < w.k[2]; ++kw, ++t) {
        const float** px = tg.tab[t];
        if (all_inside) {
          const float* base =
              a.x + ((kd * w.d[0] * w.in[1] + kh * w.d[1]) * w.in[2] + kw * w.d[2]) * a.cin;
          for (int j = 0; j < kTm; ++j) px[j] = base + tg.org[j];
        } else {
          tap_ptrs(a, tg, kd * w.d[0], kh * w.d[1], kw * w.d[2], px);
        }
        if (tg.row_runs) {  // few channels: no rows skipped (not worth the test)
          tg.skip[t] = 0;
          continue;
        }
        tg.skip[t] = conv::tap_skip(px, tg.cnt, tm, a.zeros);
      }
  tg.packed = tg.row_runs && runs_fit(a);
  if (!tg.row_runs) return;
  if (!w_inside) copy_runs(a, tg, rows, run);
  if (!tg.packed) return;
  for (int64_t r = 0; r < rows; ++r) {
    const float* const* px = tg.tab[r * w.k[2]];
    float* dst = tg.a_tile + r * run * kTm;
    for (int64_t e = 0; e < run; ++e)
      for (int j = 0; j < kTm; ++j) dst[e * kTm + j] = px[j][e];
  }
}

// The finished output at the element of y that yf points to: y itself, or
// a.y_out (bf16 / f16) when set.
template <class T>
inline T* out_at(const DirectArgs& a, const float* yf) {
  if constexpr (std::is_same_v<T, float>)
    return a.y + (yf - a.y);
  else
    return static_cast<T*>(a.y_out) + (yf - a.y);
}

// The finished f32 outputs of cnt pixels x nc channels at y, rounded into
// a.y_out (out of line: accumulate's accumulators stay in registers only
// while its epilogue is small).
[[gnu::noinline]] inline void round_out(const DirectArgs& a, const float* y, int cnt, int nc) {
  const auto n = static_cast<size_t>(nc);
  for (int j = 0; j < cnt; ++j) {
    const float* src = y + j * a.cout;
    if (a.y_out_t == DType::bf16)
      convert_f32_to_bf16(src, out_at<bf16>(a, src), n);
    else
      convert_f32_to_f16(src, out_at<f16>(a, src), n);
  }
}

// The tile's cnt pixels x (n0 + n1) channels, staged as f32 sums (kTm x
// kNr), to y; after the last input channel block (`last`) with bias,
// activation K (chosen once per tile, not per vector) and residual.
// Out of line, reading the stage: accumulate's accumulators are then never
// addressed by a run-time index. Reading them here (inlined, with the loop
// over cnt pixels) made GCC keep the AVX-512 accumulator arrays in memory
// and store all 28 of them on every step of the K loop (Zen 4, 320->320
// 64x64: 34% of the FMA peak, 97-100 ms against 32 ms for oneDNN).
template <Act K, bool kStream = false>
[[gnu::noinline]] void store_tile(const DirectArgs& a, float* y, int cnt, int n0, int n1,
                                  const float* stage, bool last, Vf b0, Vf b1) {
  const float* res = last && a.residual ? a.residual + (y - a.y) : nullptr;
  for (int j = 0; j < cnt; ++j) {
    Vf v0 = load(stage + j * kNr), v1 = load(stage + j * kNr + kLanes);
    if (last) {
      v0 = act_apply_t<K>(v0 + b0);
      v1 = act_apply_t<K>(v1 + b1);
      if (res) {
        v0 = v0 + load_n(res + j * a.cout, n0);
        if (n1 > 0) v1 = v1 + load_n(res + j * a.cout + kLanes, n1);
      }
    }
    float* o = y + j * a.cout;
    if constexpr (kStream) {  // DirectArgs::stream: whole aligned vectors
      stream(o, v0);
      if (n1 > 0) stream(o + kLanes, v1);
      continue;
    }
    if (n0 == kLanes)
      store(o, v0);
    else
      store_n(o, v0, n0);
    if (n1 == kLanes)
      store(o + kLanes, v1);
    else if (n1 > 0)
      store_n(o + kLanes, v1, n1);
  }
}

// Pixel j's input e of a tap's rows px.
struct PixelInput {
  const float* const* px;
  int64_t e;
  float operator()(int j) const { return px[j][e]; }
};

// Weight row e of wp: kTm broadcasts (pixel j's input in(j)) times two weight
// vectors, the row 8 ahead prefetched into L1 and (Far) 64 ahead into L2.
template <bool Far, int TM, class In, int J0 = 0, int J1 = TM>
__attribute__((always_inline)) inline void weight_row_step(Vf (&acc0)[TM], Vf (&acc1)[TM], In in,
                                                           const float* wp, int64_t e) {
  const Vf w0 = load(wp + e * kNr), w1 = load(wp + e * kNr + kLanes);
  __builtin_prefetch(wp + (e + kPfAhead) * kNr, 0, 3);
  if constexpr (Far) __builtin_prefetch(wp + (e + kPfFar) * kNr, 0, 2);
  if constexpr (kNr * sizeof(float) > 64) {
    __builtin_prefetch(wp + (e + kPfAhead) * kNr + 16, 0, 3);
    if constexpr (Far) __builtin_prefetch(wp + (e + kPfFar) * kNr + 16, 0, 2);
  }
#pragma GCC unroll 14
  for (int j = J0; j < J1; ++j) {
    const Vf b = set1(in(j));
    acc0[j] = fma(b, w0, acc0[j]);
    acc1[j] = fma(b, w1, acc1[j]);
  }
}

// The tile's output channels of panel `pnl`, input channels [c0, c1), on TM
// register rows (at least cnt): starts from zero (first block) or the
// partial sums in y, and applies the epilogue after the last block.
template <int TM>
void accumulate_rows(const DirectArgs& a, const TileGeo& tg, int64_t pnl, int64_t c0, int64_t c1) {
  const conv::Window& w = a.w;
  const int64_t taps = w.taps();
  const float* panel = a.packed + tg.g * a.group_stride + pnl * taps * a.cin_g * kNr;
  const int64_t oc0 = tg.g * a.cout_g + pnl * kNr;
  const int nc = static_cast<int>(std::min<int64_t>(kNr, a.cout_g - pnl * kNr));
  const int n0 = std::min(nc, kLanes), n1 = nc - n0;
  const bool first = c0 == 0, last = c1 == a.cin_g;
  const int cnt = tg.cnt;
  float* y = a.y + (tg.n * w.out_size() + tg.m0) * a.cout + oc0;
  Vf acc0[TM], acc1[TM];
#pragma GCC unroll 14
  for (int j = 0; j < TM; ++j) {
    if (first || j >= cnt) {
      acc0[j] = acc1[j] = zero();
    } else {
      acc0[j] = load_n(y + j * a.cout, n0);
      acc1[j] = n1 > 0 ? load_n(y + j * a.cout + kLanes, n1) : zero();
    }
  }
  auto step_with = [&](auto in, const float* wp, int64_t e) {
    weight_row_step<true, TM>(acc0, acc1, in, wp, e);
  };
  auto step = [&](const float* const* px, const float* wp, int64_t e) {
    step_with([&](int j) { return px[j][e]; }, wp, e);
  };
  if (tg.row_runs && c0 == 0 && c1 == a.cin_g) {
    // One sub-block of all channels, every pixel's kw taps inside along W,
    // stride-1 taps: a kernel row's k2 taps read one contiguous run of
    // k2 * cin_g inputs (and weight rows), one loop instead of k2 short ones
    // (the UNet's 4-channel stem). Rows in the H/D padding read zeros.
    const int64_t run = w.k[2] * a.cin_g;
    if (tg.packed) {
      // The kernel rows' runs are consecutive weight rows too: one loop,
      // one input pointer.
      for (int64_t e = 0; e < taps * a.cin_g; ++e) {
        const float* ae = tg.a_tile + e * kTm;
        step_with([&](int j) { return ae[j]; }, panel, e);
      }
    } else {
      for (int64_t t = 0; t < taps; t += w.k[2]) {
        const float* wp = panel + t * a.cin_g * kNr;
        for (int64_t e = 0; e < run; ++e) step(tg.tab[t], wp, e);
      }
    }
  } else {
    const float* own[kTm];
    for (int64_t s0 = c0, s1; s0 < c1; s0 = s1) {
      // Rows of the sub-block starting at channel sb start at sb * taps;
      // tap t's at + t * len (direct_row).
      const int64_t sb = s0 / a.sub * a.sub, len = std::min(a.sub, a.cin_g - sb);
      s1 = std::min(c1, sb + a.sub);
      const float* wsb = panel + (sb * taps - sb) * kNr;
      for (int64_t t = 0; t < taps; ++t) {
        const float* wp = wsb + t * len * kNr;
        if (!tg.table) {
          tap_ptrs(a, tg, t / (w.k[1] * w.k[2]) * w.d[0], t / w.k[2] % w.k[1] * w.d[1],
                   t % w.k[2] * w.d[2], own);
          for (int64_t ic = s0; ic < s1; ++ic) step(own, wp, ic);
          continue;
        }
        // Rows and taps that read only padding are left out (as in the
        // bf16 kernel): a row tile at a map's edge, or an odd tile's last.
        const float* const* px = tg.tab[t];
        auto rows = [&]<int J0, int J1>() {
          for (int64_t ic = s0; ic < s1; ++ic)
            weight_row_step<true, TM, PixelInput, J0, J1>(acc0, acc1, PixelInput{px, ic}, wp, ic);
        };
        switch (tg.skip[t]) {
          case 0:
            rows.template operator()<0, TM>();
            break;
          case conv::kSkipFirst:
            rows.template operator()<1, TM>();
            break;
          case conv::kSkipLast:
            rows.template operator()<0, TM - 1>();
            break;
          case conv::kSkipFirst | conv::kSkipLast:
            rows.template operator()<1, TM - 1>();
            break;
          default:
            break;
        }
      }
    }
  }
  alignas(64) float stage[kTm * kNr];
#pragma GCC unroll 14
  for (int j = 0; j < TM; ++j) {
    store(stage + j * kNr, acc0[j]);
    store(stage + j * kNr + kLanes, acc1[j]);
  }
  if (!last) return store_tile<Act::none>(a, y, cnt, n0, n1, stage, false, zero(), zero());
  Vf b0 = zero(), b1 = zero();
  if (a.bias) {
    b0 = load_n(a.bias + oc0, n0);
    if (n1 > 0) b1 = load_n(a.bias + oc0 + kLanes, n1);
  }
  with_act(a.act, [&](auto kind) {
    if (a.stream)
      store_tile<decltype(kind)::value, true>(a, y, cnt, n0, n1, stage, true, b0, b1);
    else
      store_tile<decltype(kind)::value>(a, y, cnt, n0, n1, stage, true, b0, b1);
  });
  if (a.y_out) round_out(a, y, cnt, nc);
}

// A tile on the fewest even register rows that hold its cnt pixels: the
// last tile of a small map (8x8: 4 x 14 + 8 pixels) then costs its own
// pixels, not a whole kTm-row tile.
template <int TM = kTm>
inline void accumulate(const DirectArgs& a, const TileGeo& tg, int64_t pnl, int64_t c0,
                       int64_t c1) {
  if constexpr (TM > 2)
    if (tg.cnt <= TM - 2) return accumulate<TM - 2>(a, tg, pnl, c0, c1);
  accumulate_rows<TM>(a, tg, pnl, c0, c1);
}

// A panel's f32 tile (kTm x kNr, staged) through activation K into dst (T:
// float, or bf16 / f16 rounded once). Out of line on purpose: inlined next to
// packed_panels' K loop, GCC kept the activation's constants in registers
// across it and spilled accumulators (the AVX2 stem + SiLU ran 1.8x slower).
template <Act K, class T, bool kStream>
[[gnu::noinline]] void act_rows(const float* stage, T* dst, int cnt, int64_t ld) {
  for (int j = 0; j < cnt; ++j) {
    store_or_stream(dst + j * ld, act_apply_t<K>(load(stage + j * kNr)), kStream);
    store_or_stream(dst + j * ld + kLanes, act_apply_t<K>(load(stage + j * kNr + kLanes)), kStream);
  }
}

// A tile with its A panel built (few channels, one channel block, no
// residual: the UNet's stem) over the whole panels [pnl0, pnl1): each panel
// a loop of K steps and the epilogue, with nothing per panel but the
// pointers (accumulate, per panel, spent a quarter of the stem's time on its
// setup and epilogue branches around K = 36 steps). Output T: float, or
// bf16 / f16 into a.y_out, rounded once from the f32 value. relu and no
// activation into an f32 output are applied in the epilogue; the others
// stage the panel's f32 values on the stack for act_rows.
template <Act K, class T, bool kStream = false>
inline void packed_panels(const DirectArgs& a, const TileGeo& tg, int64_t pnl0, int64_t pnl1) {
  // A 16-bit output is staged too: rounding in the panel loop put the
  // rounding constants in registers and GCC spilled accumulators to the
  // stack (the AVX2 bf16 stem ran at half the f32 one's speed).
  constexpr bool kStage = !(K == Act::none || K == Act::relu) || !std::is_same_v<T, float>;
  constexpr Act kTileAct = kStage ? Act::none : K;
  const int64_t kk = a.w.taps() * a.cin_g;
  const float* panel = a.packed + tg.g * a.group_stride + pnl0 * kk * kNr;
  const float* bias = a.bias ? a.bias + tg.g * a.cout_g + pnl0 * kNr : nullptr;
  float* y = a.y + (tg.n * a.w.out_size() + tg.m0) * a.cout + tg.g * a.cout_g + pnl0 * kNr;
  const int cnt = tg.cnt;
  // Stores of the panel loop: finished outputs, or f32 values for act_rows.
  using TP = std::conditional_t<kStage, float, T>;
  alignas(64) float stage[kStage ? kTm * kNr : 1];
  for (int64_t pnl = pnl0; pnl < pnl1; ++pnl, panel += kk * kNr, y += kNr) {
    Vf acc0[kTm], acc1[kTm];
    for (int j = 0; j < kTm; ++j) acc0[j] = acc1[j] = zero();
    for (int64_t e = 0; e < kk; ++e) {
      const float* ae = tg.a_tile + e * kTm;
      weight_row_step<false, kTm>(
          acc0, acc1, [&](int j) { return ae[j]; }, panel, e);
    }
    Vf b0 = zero(), b1 = zero();
    if (bias) {
      b0 = load(bias);
      b1 = load(bias + kLanes);
      bias += kNr;
    }
#pragma GCC unroll 14
    for (int j = 0; j < kTm; ++j) {
      if (j >= cnt) break;
      TP* o;
      if constexpr (kStage)
        o = stage + j * kNr;
      else
        o = out_at<TP>(a, y + j * a.cout);
      store_or_stream(o, act_apply_t<kTileAct>(acc0[j] + b0), kStream && !kStage);
      store_or_stream(o + kLanes, act_apply_t<kTileAct>(acc1[j] + b1), kStream && !kStage);
    }
    if constexpr (kStage) act_rows<K, T, kStream>(stage, out_at<T>(a, y), cnt, a.cout);
  }
}

// Tasks: (image, group, run of channel panels, run of pixel tiles). A task
// walks the input channels in blocks (its panel's block of weights, at most
// kPanelBytes, stays in L2 across its tiles), keeping partial sums in y
// between blocks. Consecutive tasks share the larger operand: the same
// pixels (input bigger than the weights: large feature maps; kTilesPerTask
// tiles per task) or the same panel (weights bigger: deep layers; up to
// kTilesPerPanelTask tiles in equal runs, so a panel's weights come from
// memory once for many tiles: with 8 the other thread's tasks on the same
// panel read it again, and an 8x8 map's last run of 3 tiles waited on
// memory). A task takes as many panels as keep their weights within half
// of L2 (all of them for few input channels), in equal runs: each tile
// builds its input pointers once for them and its inputs stay in L1 across
// them (2 threads, against one panel per task: 128->128 512x512 6% faster
// at AVX2 and AVX-512, 256->256 256x256 1-4%, AVX-512 640->640 4%). Which task
// runs which panel does not change an output's sums: the blocking of the
// sums is fixed by the shape, so outputs never depend on the thread count,
// the task order or the cache size.
inline void run(const DirectArgs& a) {
  const int64_t P = a.w.out_size();
  const int64_t npan_all = (a.cout_g + kNr - 1) / kNr;
  const int64_t panel_bytes = a.w.taps() * a.cin_g * static_cast<int64_t>(sizeof(float) * kNr);
  const int64_t budget = static_cast<int64_t>(cpu_info().l2_bytes / 2);
  const int64_t fit = std::clamp<int64_t>(budget / std::max<int64_t>(panel_bytes, 1), 1, npan_all);
  const int64_t runs = (npan_all + fit - 1) / fit;   // fewest runs of at most `fit` panels
  const int64_t ppt = (npan_all + runs - 1) / runs;  // panels per task, runs of near-equal size
  const int64_t npan = (npan_all + ppt - 1) / ppt;   // panel runs
  // At AVX-512 each tile within one output row (conv::PixelTiles by rows)
  // where a row has kRowTileMin pixels or more, so that the taps of a
  // row's first and last pixels, and of the map's first and last rows, that
  // read only padding are skipped (prepare, accumulate_rows) as in the bf16
  // kernel. Zen 4, 2 threads, ms: 1280->1280 8x8 8.27-8.33 -> 7.41-7.56,
  // 16x16 33.0-33.1 -> 31.0-31.2, 640->640 32x32 33.3-33.5 -> 32.2-33.2,
  // 320->320 64x64 33.1-33.7 -> 32.9-33.5. Not at AVX2, whose 6-pixel tiles
  // would be split to 5 (1280->1280 16x16 32.9-33.0 ms with tiles across
  // rows, 33.5-33.9 within them), nor where the tile's inputs can be packed
  // (the stem: 13-pixel tiles on 14 rows there, 0.471 -> 0.522 ms).
  const int64_t W = a.w.out[2];
  const bool rowt = kLanes == 16 && W >= kRowTileMin && a.w.taps() <= conv::kDirectMaxTaps &&
                    !(row_runs_ok(a) && runs_fit(a));
  const conv::PixelTiles tiles(P, W, kTm, rowt);
  const int64_t ntiles = tiles.count();
  const double in_bytes = static_cast<double>(a.w.in_size()) * static_cast<double>(a.cin);
  const double w_bytes =
      static_cast<double>(a.w.taps()) * static_cast<double>(a.cin_g) * static_cast<double>(a.cout);
  const bool pixels_outer = in_bytes > w_bytes;
  const int64_t max_tiles = pixels_outer ? kTilesPerTask : kTilesPerPanelTask;
  const int64_t nchunks = (ntiles + max_tiles - 1) / max_tiles;
  const int64_t tpt = (ntiles + nchunks - 1) / nchunks;  // tiles per task
  // Input-channel blocks: as few as keep a panel's block of weights within
  // kPanelBytes (L2), of equal size (a multiple of the sub-block).
  const int64_t nblk = std::max<int64_t>(1, (panel_bytes + kPanelBytes - 1) / kPanelBytes);
  const int64_t unit = a.sub < a.cin_g ? a.sub : 2;
  const int64_t cb = ((a.cin_g + nblk - 1) / nblk + unit - 1) / unit * unit;
  parallel_tasks(a.n * a.groups * npan * nchunks, [&](int64_t t) {
    const StreamFence fence{a.stream};
    const int64_t inner = t % (npan * nchunks);
    const int64_t ch = pixels_outer ? inner / npan : inner % nchunks;
    const int64_t pr = pixels_outer ? inner % npan : inner / nchunks;
    const int64_t g = t / (nchunks * npan) % a.groups, n = t / (nchunks * npan * a.groups);
    const int64_t tile0 = ch * tpt, tile1 = std::min(ntiles, tile0 + tpt);
    const int64_t pnl0 = pr * ppt, pnl1 = std::min(npan_all, pnl0 + ppt);
    TileGeo tg;
    tg.n = n;
    tg.g = g;
    for (int64_t c0 = 0; c0 < a.cin_g; c0 += cb) {
      const int64_t c1 = std::min(a.cin_g, c0 + cb);
      for (int64_t ti = tile0; ti < tile1; ++ti) {
        tiles.at(ti, tg.m0, tg.cnt);
        prepare(a, tg);
        if (tg.packed && !a.residual && c0 == 0 && c1 == a.cin_g) {
          // whole panels on the fast path, a partial last one on accumulate
          const int64_t full = std::min(pnl1, pnl0 + (a.cout_g - pnl0 * kNr) / kNr);
          if (full > pnl0)
            with_act(a.act, [&](auto kind) {
              constexpr Act k = decltype(kind)::value;
              if (a.stream)
                packed_panels<k, float, true>(a, tg, pnl0, full);
              else if (!a.y_out)
                packed_panels<k, float>(a, tg, pnl0, full);
              else if (a.y_out_t == DType::bf16)
                packed_panels<k, bf16>(a, tg, pnl0, full);
              else
                packed_panels<k, f16>(a, tg, pnl0, full);
            });
          for (int64_t pnl = full; pnl < pnl1; ++pnl) accumulate(a, tg, pnl, c0, c1);
          continue;
        }
        for (int64_t pnl = pnl0; pnl < pnl1; ++pnl) accumulate(a, tg, pnl, c0, c1);
      }
    }
  });
}

}  // namespace conv_direct_k

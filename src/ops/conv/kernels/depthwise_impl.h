// The depthwise kernel written once over the vec_*.h names; included by
// depthwise_{scalar,avx2,avx512}.cc inside their ISA namespace. Each output
// is bias + the taps' products summed in the reference's order (kd, kh, kw),
// one f32 FMA each, so every thread split gives the same bits.
//
// A register tile is R output rows x kPix pixels x NV channel vectors. With
// R = 2 (stride and dilation 1 along H) an input row loaded once feeds both
// output rows: half the L2 -> L1 traffic and 0.75 loads per FMA instead of
// 1.25 (the kernel is bound by its loads, not its FMAs).

namespace dw_k {

using conv::DepthwiseArgs;
using conv::Window;
inline constexpr int kPix = 4;                   // output pixels per register tile
inline constexpr int kNv = kLanes == 8 ? 1 : 2;  // channel vectors (AVX2: 16 registers)

// One tile row group: R output rows of one (n, od), sharing input rows.
template <class T, int R>
struct RowGroup {
  const T* const* rows;  // [kd][q], q < K1 + R - 1: input rows, null in the padding
  T* yr[R];
  const T* rr[R];  // residual rows or null
};

// Tiles of a row group over channel vectors NV at a time (one partial
// vector when Tail).
template <class T, act::Kind K, int R, int NV, bool Tail>
struct Channels {
  const DepthwiseArgs& a;
  const RowGroup<T, R>& g;

  Vf ld(const T* p, int v, int nl) const {
    if constexpr (Tail)
      if (v == NV - 1) return load_n(p, nl);
    return load(p);
  }
  void finish(Vf acc, int r, int64_t ow, int64_t c0, int v, int nl) const {
    const int64_t o = ow * a.c + c0 + v * kLanes;
    if (a.bias) acc = acc + load(a.bias + c0 + v * kLanes);
    Vf y = act_apply_t<K>(acc);
    if (g.rr[r]) y = y + ld(g.rr[r] + o, v, nl);
    if (Tail && v == NV - 1)
      store_n(g.yr[r] + o, y, nl);
    else
      store(g.yr[r] + o, y);
  }
  // Pixels [ow, ow + np), np <= kPix, for the channel vectors in [cb, ce).
  // Checked: each tap's column tested (row ends), reads outside the row
  // take the zero vectors zb; else every tap lies inside the row. Rows in
  // the padding read zb. The row pointers are set up once for all the
  // channel vectors (AVX2 spent about half its time on per-vector setup).
  template <bool Checked>
  void tile(int64_t ow, int np, int64_t cb, int64_t ce) const {
    const Window& w = a.w;
    alignas(64) static constexpr T zb[NV * kLanes] = {};
    const int64_t k1 = w.k[1], k2 = w.k[2], q_n = k1 + R - 1, nq = w.k[0] * q_n;
    const int64_t col0 = (ow * w.s[2] - w.pb[2]) * a.c;
    const int64_t step = w.s[2] * a.c, dil = w.d[2] * a.c;
    const T* base[conv::kDwMaxRows];  // the tile's first column per input row
    for (int64_t j = 0; j < nq; ++j) base[j] = g.rows[j] ? g.rows[j] + col0 : nullptr;
    for (int64_t c0 = cb; c0 < ce; c0 += NV * kLanes) {
      const int nl = Tail ? static_cast<int>(ce - c0) : kLanes;
      const float* wc = a.wt + c0;
      Vf acc[R][kPix][NV];
      for (auto& rv : acc)
        for (auto& pv : rv)
          for (Vf& v : pv) v = zero();
      // Input row q feeds output row r with kh = q - r; M: the rows it feeds.
      auto step_row = [&](const T* xr, int64_t kd, int64_t q, auto m) {
        constexpr int M = decltype(m)::value;
        const bool row_in = xr != nullptr;
        const T* b = row_in ? xr + c0 : zb;
        const int64_t st = row_in ? step : 0, dl = row_in ? dil : 0;
        const float* wq = wc + (kd * k1 + q) * k2 * a.cp;
        for (int64_t kw = 0; kw < k2; ++kw) {
          Vf wk[R][NV];
          for (int r = 0; r < R; ++r)
            if (M >> r & 1)
              for (int v = 0; v < NV; ++v) wk[r][v] = load(wq + (kw - r * k2) * a.cp + v * kLanes);
          const int64_t iw0 = ow * w.s[2] - w.pb[2] + kw * w.d[2];
          for (int p = 0; p < kPix; ++p) {
            const T* src = b + kw * dl + p * st;
            if constexpr (Checked) {
              // Inside the row (one unsigned compare); pixels p >= np are
              // computed from in-row data or zeros and not stored.
              const auto iw = static_cast<uint64_t>(iw0 + p * w.s[2]);
              src = iw < static_cast<uint64_t>(w.in[2]) ? src : zb;
            }
            for (int v = 0; v < NV; ++v) {
              Vf xv = ld(src + v * kLanes, v, nl);
              // Two rows use xv: one load into a register, not a memory
              // operand per FMA (GCC's choice; 10 loads per 8 FMAs -> 6).
              if constexpr (M == 3 && kLanes > 1) asm("" : "+v"(xv.v));
              for (int r = 0; r < R; ++r)
                if (M >> r & 1) acc[r][p][v] = fma(xv, wk[r][v], acc[r][p][v]);
            }
          }
        }
      };
      for (int64_t kd = 0; kd < w.k[0]; ++kd) {
        const T* const* xr = base + kd * q_n;
        if constexpr (R == 1) {
          for (int64_t q = 0; q < k1; ++q) step_row(xr[q], kd, q, std::integral_constant<int, 1>{});
        } else {
          step_row(xr[0], kd, 0, std::integral_constant<int, 1>{});
          for (int64_t q = 1; q < k1; ++q) step_row(xr[q], kd, q, std::integral_constant<int, 3>{});
          step_row(xr[k1], kd, k1, std::integral_constant<int, 2>{});
        }
      }
      for (int r = 0; r < R; ++r)
        for (int p = 0; p < kPix; ++p)
          if (!Checked || p < np)
            for (int v = 0; v < NV; ++v) finish(acc[r][p][v], r, ow + p, c0, v, nl);
    }
  }
};

// Channels per block: a tile's input columns and the taps' weights for one
// block stay within 32 KiB of L1 while the tile walks the block's vectors,
// so the tile reads each pixel's block as one contiguous run (prefetched as
// a stream) instead of one vector per pixel 4 C bytes apart.
inline int64_t channel_block(const Window& w, int rows, int64_t c) {
  const int64_t cols = (kPix - 1) * w.s[2] + (w.k[2] - 1) * w.d[2] + 1;
  const int64_t per_channel = ((w.k[1] + rows - 1) * w.k[0] * cols + w.taps()) * 4;
  const int64_t b = std::max<int64_t>(32, (32 << 10) / per_channel / 32 * 32);
  return std::min(b, c);
}

// A row group: per block of channels, the tiles along the row (checked at
// the row's ends), each over the block's channel vectors.
template <class T, act::Kind K, int R>
void row_group(const DepthwiseArgs& a, const RowGroup<T, R>& g, int64_t lo, int64_t hi) {
  const int64_t C = a.c, ow_n = a.w.out[2];
  const int64_t cb = channel_block(a.w, R, C);
  for (int64_t cs = 0; cs < C; cs += cb) {
    const int64_t ce = std::min(C, cs + cb);
    auto tile = [&](auto checked, int64_t ow, int np) {
      constexpr bool kChecked = decltype(checked)::value;
      const int64_t c_nv = cs + (ce - cs) / (kNv * kLanes) * (kNv * kLanes);
      const int64_t c_1 = cs + (ce - cs) / kLanes * kLanes;
      if (c_nv > cs) Channels<T, K, R, kNv, false>{a, g}.template tile<kChecked>(ow, np, cs, c_nv);
      if (c_1 > c_nv) Channels<T, K, R, 1, false>{a, g}.template tile<kChecked>(ow, np, c_nv, c_1);
      if (ce > c_1) Channels<T, K, R, 1, true>{a, g}.template tile<kChecked>(ow, np, c_1, ce);
    };
    int64_t ow = 0;
    auto checked_to = [&](int64_t end) {
      while (ow < end) {
        const int np = static_cast<int>(std::min<int64_t>(kPix, end - ow));
        tile(std::true_type{}, ow, np);
        ow += np;
      }
    };
    checked_to(std::min(lo, ow_n));
    for (; ow + kPix <= hi; ow += kPix) tile(std::false_type{}, ow, kPix);
    if (ow < hi && hi - kPix >= lo && !g.rr[0]) {
      // The last inside pixels as a whole tile ending at hi: it recomputes
      // some outputs of the tile before it, to the same bits (not with a
      // residual, which may be the output itself).
      tile(std::false_type{}, hi - kPix, kPix);
      ow = hi;
    }
    checked_to(ow_n);
  }
}

template <class T, act::Kind K>
void run_typed(const DepthwiseArgs& a) {
  const Window& w = a.w;
  const int64_t C = a.c, IW = w.in[2], OW = w.out[2], OH = w.out[1];
  const int64_t lo = (w.pb[2] + w.s[2] - 1) / w.s[2];
  const int64_t last = IW - 1 + w.pb[2] - (w.k[2] - 1) * w.d[2];
  const int64_t hi = last < 0 ? 0 : std::min(OW, last / w.s[2] + 1);
  // Two output rows per group where they share input rows.
  const int64_t rg = w.s[1] == 1 && w.d[1] == 1 ? 2 : 1;
  const int64_t groups_per_plane = (OH + rg - 1) / rg;
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  const T* res = static_cast<const T*>(a.residual);
  parallel_for(a.n * w.out[0] * groups_per_plane, 1, [&](int64_t g0, int64_t g1) {
    const T* rows[conv::kDwMaxRows];
    for (int64_t gi = g0; gi < g1; ++gi) {
      const int64_t plane = gi / groups_per_plane, oh = gi % groups_per_plane * rg;
      const int64_t n = plane / w.out[0], od = plane % w.out[0];
      const int64_t nr = std::min(rg, OH - oh);  // output rows in this group
      const int64_t q_n = w.k[1] + nr - 1;
      for (int64_t kd = 0; kd < w.k[0]; ++kd)
        for (int64_t q = 0; q < q_n; ++q) {
          // nr == 2 only with stride and dilation 1 along H.
          const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
          const int64_t ih = oh * w.s[1] - w.pb[1] + q * w.d[1];
          const bool in = id >= 0 && id < w.in[0] && ih >= 0 && ih < w.in[1];
          rows[kd * q_n + q] = in ? x + ((n * w.in[0] + id) * w.in[1] + ih) * IW * C : nullptr;
        }
      const int64_t r0 = plane * OH + oh;  // first output row
      auto out_row = [&](int64_t r) { return y + (r0 + r) * OW * C; };
      auto res_row = [&](int64_t r) { return res ? res + (r0 + r) * OW * C : nullptr; };
      if (nr == 2)
        row_group<T, K, 2>(
            a, RowGroup<T, 2>{rows, {out_row(0), out_row(1)}, {res_row(0), res_row(1)}}, lo, hi);
      else
        row_group<T, K, 1>(a, RowGroup<T, 1>{rows, {out_row(0)}, {res_row(0)}}, lo, hi);
    }
  });
}

// Channels first, stride 1 along W: per (n, c, od) plane, each input row
// is staged once into a ring of f32 rows with its W padding as zeros (and
// zeros past the end for whole vectors), so a block of V vectors of one
// output row sums its taps with plain loads at ow + kw * d and a broadcast
// weight: V independent FMA chains, no layout transposes.
namespace nchw {

// R output rows x V vectors of one plane, [ow, ow + V vectors) of each.
template <class T, act::Kind K>
struct Plane {
  const DepthwiseArgs& a;
  int64_t c;
  const float* const* rows;  // [r * nt + j]: output row r's tap row j (kd, kh)
  int64_t nt;
  T* y;         // first output row (rows OW apart)
  const T* rr;  // first residual row or null

  template <int R, int V>
  void block(int64_t ow) const {
    const Window& w = a.w;
    const int64_t k2 = w.k[2], ow_n = w.out[2];
    Vf acc[R][V];
    for (auto& rv : acc)
      for (Vf& v : rv) v = zero();
    for (int64_t j = 0; j < nt; ++j)
      for (int64_t kw = 0; kw < k2; ++kw) {
        const Vf wk = set1(a.wt[(j * k2 + kw) * a.cp + c]);
        for (int r = 0; r < R; ++r) {
          const float* b = rows[r * nt + j] + ow + kw * w.d[2];
          for (int v = 0; v < V; ++v) acc[r][v] = fma(load(b + v * kLanes), wk, acc[r][v]);
        }
      }
    const Vf bias = a.bias ? set1(a.bias[c]) : zero();
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < V; ++v) {
        const int64_t o = r * ow_n + ow + v * kLanes;
        if (ow + v * kLanes >= ow_n) break;
        const int nl = static_cast<int>(std::min<int64_t>(kLanes, ow_n - ow - v * kLanes));
        Vf out = act_apply_t<K>(a.bias ? acc[r][v] + bias : acc[r][v]);
        if (nl == kLanes) {
          if (rr) out = out + load(rr + o);
          store(y + o, out);
        } else {
          if (rr) out = out + load_n(rr + o, nl);
          store_n(y + o, out, nl);
        }
      }
  }
  // R rows: blocks of 8 / R vectors along them, then single vectors.
  template <int R>
  void run() const {
    constexpr int VB = 8 / R;
    const int64_t ow_n = a.w.out[2];
    int64_t ow = 0;
    for (; ow + VB * kLanes <= ow_n; ow += VB * kLanes) block<R, VB>(ow);
    if constexpr (R == 1)
      for (; ow + 2 * kLanes <= ow_n; ow += 2 * kLanes) block<1, 2>(ow);
    for (; ow < ow_n; ow += kLanes) block<R, 1>(ow);
  }
};

template <class T, act::Kind K>
void run(const DepthwiseArgs& a) {
  const Window& w = a.w;
  const int64_t C = a.c, IW = w.in[2], OW = w.out[2], OH = w.out[1];
  const int64_t ring = conv::dw_ring_rows(w), len = conv::dw_row_floats(w);
  const int64_t nt = w.k[0] * w.k[1], in_plane = w.in_size();
  // Rows per block: 8 vectors in all (this ISA's vectors), at most the
  // ring's allowance.
  const int64_t nv = (OW + kLanes - 1) / kLanes;
  const int64_t rmax = std::min<int64_t>(conv::dw_rows_per_block(w), nv >= 8   ? 1
                                                                     : nv >= 4 ? 2
                                                                     : nv >= 2 ? 4
                                                                               : 8);
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  const T* res = static_cast<const T*>(a.residual);
  parallel_for(a.n * C * w.out[0], 1, [&](int64_t p0, int64_t p1) {
    alignas(64) float stage[conv::kDwStageFloats];
    float* zrow = stage;  // the padding rows
    std::fill(zrow, zrow + len, 0.0f);
    int64_t tag[conv::kDwMaxRows];  // input row held by each ring slot
    const float* rows[8 * conv::kDwMaxRows];
    for (int64_t pl = p0; pl < p1; ++pl) {
      const int64_t nc = pl / w.out[0], od = pl % w.out[0], c = nc % C;
      const T* xp = x + nc * in_plane;
      std::fill(tag, tag + w.k[0] * ring, int64_t{-1});
      // The staged row for (kd, ih); ih inside the input.
      auto staged = [&](int64_t kd, int64_t id, int64_t ih) {
        const int64_t slot = kd * ring + ih % ring;
        float* r = stage + (1 + slot) * len;
        if (tag[slot] != ih) {
          // [pb zeros | the row as f32 | zeros to len]
          const T* src = xp + (id * w.in[1] + ih) * IW;
          const int64_t pb = w.pb[2];
          std::fill(r, r + pb, 0.0f);
          int64_t i = 0;
          for (; i + kLanes <= IW; i += kLanes) store(r + pb + i, load(src + i));
          if (i < IW) {
            const int nl = static_cast<int>(IW - i);
            store_n(r + pb + i, load_n(src + i, nl), nl);
          }
          std::fill(r + pb + IW, r + len, 0.0f);
          tag[slot] = ih;
        }
        return r;
      };
      for (int64_t oh = 0; oh < OH;) {
        int64_t nr = rmax;
        while (nr > OH - oh) nr /= 2;
        for (int64_t r = 0; r < nr; ++r)
          for (int64_t kd = 0; kd < w.k[0]; ++kd) {
            const int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
            for (int64_t kh = 0; kh < w.k[1]; ++kh) {
              const int64_t ih = (oh + r) * w.s[1] - w.pb[1] + kh * w.d[1];
              const bool in = id >= 0 && id < w.in[0] && ih >= 0 && ih < w.in[1];
              rows[r * nt + kd * w.k[1] + kh] = in ? staged(kd, id, ih) : zrow;
            }
          }
        const int64_t orow = (pl * OH + oh) * OW;
        const Plane<T, K> p{a, c, rows, nt, y + orow, res ? res + orow : nullptr};
        if (nr == 8)
          p.template run<8>();
        else if (nr == 4)
          p.template run<4>();
        else if (nr == 2)
          p.template run<2>();
        else
          p.template run<1>();
        oh += nr;
      }
    }
  });
}

}  // namespace nchw

template <class T>
void run_t(const DepthwiseArgs& a) {
  with_act(a.act, [&](auto kind) {
    if (a.cl)
      run_typed<T, decltype(kind)::value>(a);
    else
      nchw::run<T, decltype(kind)::value>(a);
  });
}

inline void run(const DepthwiseArgs& a) {
  if (a.t == DType::bf16)
    run_t<bf16>(a);
  else if (a.t == DType::f16)
    run_t<f16>(a);
  else
    run_t<float>(a);
}

}  // namespace dw_k

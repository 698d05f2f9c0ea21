// Resize written once over the vec_*.h names; included by
// resize_{scalar,avx2,avx512}.cc inside their ISA namespace.

namespace resize_k {

using conv::ResizeDim;
using conv::ResizePlan;

inline float to_float(float v) { return v; }
inline float to_float(bf16 v) { return opsnn::to_f32(v); }
inline float to_float(f16 v) { return opsnn::to_f32(v); }
template <class T>
inline T from_float(float v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else if constexpr (std::is_same_v<T, bf16>)
    return opsnn::to_bf16(v);
  else
    return opsnn::to_f16(v);
}

// Outputs of this many bytes or more are written with streaming stores where
// every vector store is aligned (as the GEMM's outputs): they bypass the
// caches instead of reading each line before writing it.
inline constexpr int64_t kStreamMinBytes = int64_t{8} << 20;

template <class T>
bool stream_output(const void* y, int64_t elems, int64_t row) {
  return elems * static_cast<int64_t>(sizeof(T)) >= kStreamMinBytes && row % kLanes == 0 &&
         reinterpret_cast<uintptr_t>(y) % (kLanes * sizeof(T)) == 0;
}

inline bool outside(const ResizePlan& p, int64_t od, int64_t oh, int64_t ow) {
  return (!p.dim[0].outside.empty() && p.dim[0].outside[od]) ||
         (!p.dim[1].outside.empty() && p.dim[1].outside[oh]) ||
         (!p.dim[2].outside.empty() && p.dim[2].outside[ow]);
}

// Channels last: per output pixel its taps (input pixel and weight, at most
// kMaxTaps: cubic in 3-D) are listed once, then every channel vector sums
// them in that order: per vector, loads and FMAs only.
inline constexpr int kMaxTaps = 64;

// The whole channel vectors of one output pixel over N taps (the generic
// loop's FMA order); returns the first channel not done.
template <int N, class T>
int64_t sum_taps(const T* const* src, const float* wt, int64_t C, T* dst, bool nt) {
  Vf w[N];
  for (int t = 0; t < N; ++t) w[t] = set1(wt[t]);
  int64_t c0 = 0;
  for (; c0 + kLanes <= C; c0 += kLanes) {
    Vf acc = zero();
#pragma GCC unroll 4
    for (int t = 0; t < N; ++t) acc = fma(w[t], load(src[t] + c0), acc);
    store_or_stream(dst + c0, acc, nt);
  }
  return c0;
}

template <class T>
void channels_last(const ResizePlan& p, const T* x, T* y) {
  const ResizeDim &D = p.dim[0], &H = p.dim[1], &W = p.dim[2];
  const int64_t outs = D.out * H.out * W.out, C = p.c;
  const bool nt = stream_output<T>(y, p.n * outs * C, C);
  parallel_for(p.n * outs, 1, [&](int64_t b, int64_t e) {
    const StreamFence fence{nt};
    const T* src[kMaxTaps];
    float wt[kMaxTaps];
    for (int64_t q = b; q < e; ++q) {
      const int64_t n = q / outs, o = q % outs;
      const int64_t od = o / (H.out * W.out), oh = o / W.out % H.out, ow = o % W.out;
      T* dst = y + q * C;
      if (outside(p, od, oh, ow)) {
        for (int64_t c0 = 0; c0 < C; c0 += kLanes)
          store_n(dst + c0, set1(p.extrapolation),
                  static_cast<int>(std::min<int64_t>(kLanes, C - c0)));
        continue;
      }
      int ntaps = 0;
      for (int64_t a = 0; a < D.taps; ++a)
        for (int64_t bh = 0; bh < H.taps; ++bh) {
          const float wdh = D.weight[od * D.taps + a] * H.weight[oh * H.taps + bh];
          const int64_t row = (n * D.in + D.idx[od * D.taps + a]) * H.in + H.idx[oh * H.taps + bh];
          for (int64_t cw = 0; cw < W.taps; ++cw, ++ntaps) {
            wt[ntaps] = wdh * W.weight[ow * W.taps + cw];
            src[ntaps] = x + (row * W.in + W.idx[ow * W.taps + cw]) * C;
          }
        }
      int64_t c0 = 0;
      if (ntaps == 4)  // bilinear: the weights in registers
        c0 = sum_taps<4>(src, wt, C, dst, nt);
      else if (ntaps == 1)
        c0 = sum_taps<1>(src, wt, C, dst, nt);
      for (; c0 + kLanes <= C; c0 += kLanes) {
        Vf acc = zero();
        for (int t = 0; t < ntaps; ++t) acc = fma(set1(wt[t]), load(src[t] + c0), acc);
        store_or_stream(dst + c0, acc, nt);
      }
      if (c0 < C) {
        const int nl = static_cast<int>(C - c0);
        Vf acc = zero();
        for (int t = 0; t < ntaps; ++t) acc = fma(set1(wt[t]), load_n(src[t] + c0, nl), acc);
        store_n(dst + c0, acc, nl);
      }
    }
  });
}

// Channels first: one output row (n, c, od, oh) at a time. The input rows
// it mixes (one per D x H tap pair) are first summed with their weights into
// a row of W.in floats, vectorised along the row (kRowFloats at most, on the
// stack; a single row of weight 1, as nearest gives, is read in place), then
// each output column takes its W taps from that row. No per-element index
// arithmetic: the taps were computed at create.
inline constexpr int64_t kRowFloats = 4096;
// Input rows one output row mixes: D.taps x H.taps, at most 4 x 4 (cubic).
inline constexpr int kMaxRows = 16;

template <class T>
void mix_rows(const T* const* rows, const float* wts, int nr, int64_t w_in, float* dst) {
  for (int64_t i = 0; i < w_in; i += kLanes) {
    const int nl = static_cast<int>(std::min<int64_t>(kLanes, w_in - i));
    Vf acc = zero();
    for (int r = 0; r < nr; ++r) acc = fma(set1(wts[r]), load_n(rows[r] + i, nl), acc);
    store_n(dst + i, acc, nl);
  }
}

// tf_crop_and_resize: the row's columns outside the input get the
// extrapolation value.
template <class T>
void fill_outside_columns(const ResizePlan& p, T* dst) {
  const ResizeDim& W = p.dim[2];
  if (!W.outside.empty())
    for (int64_t o = 0; o < W.out; ++o)
      if (W.outside[o]) dst[o] = from_float<T>(p.extrapolation);
}

template <class T, class S>
void columns(const ResizePlan& p, const S* src, T* dst) {
  const ResizeDim& W = p.dim[2];
  const int64_t* idx = W.idx.data();
  const float* wt = W.weight.data();
  if constexpr (std::is_same_v<S, T>) {
    if (W.doubles) {
      int64_t i = 0;
      for (; i + kLanes <= W.in; i += kLanes) {
        Vf lo, hi;
        const Vf v = load(src + i);
        zip2(v, v, lo, hi);
        store(dst + 2 * i, lo);
        store(dst + 2 * i + kLanes, hi);
      }
      for (; i < W.in; ++i) dst[2 * i] = dst[2 * i + 1] = src[i];
      return;
    }
  }
  if constexpr (std::is_same_v<S, float>) {
    if (W.halves) {
      // Outputs 2 i and 2 i + 1 for i in [1, in - 1 - kLanes] in vectors, the
      // FMAs in the taps' order (as the gathers below); the ends by the taps.
      const auto by_taps = [&](int64_t o) {
        dst[o] = from_float<T>(std::fma(wt[2 * o + 1], src[idx[2 * o + 1]],
                                        std::fma(wt[2 * o], src[idx[2 * o]], 0.0f)));
      };
      const Vf e0 = set1(W.w_even[0]), e1 = set1(W.w_even[1]);
      const Vf o0 = set1(W.w_odd[0]), o1 = set1(W.w_odd[1]);
      by_taps(0);
      by_taps(1);
      int64_t i = 1;
      for (; i + kLanes <= W.in - 1; i += kLanes) {
        const Vf xm = load(src + i - 1), x0 = load(src + i), xp = load(src + i + 1);
        Vf lo, hi;
        zip2(fma(e1, x0, fma(e0, xm, zero())), fma(o1, xp, fma(o0, x0, zero())), lo, hi);
        store(dst + 2 * i, lo);
        store(dst + 2 * i + kLanes, hi);
      }
      for (; i < W.in; ++i) {
        by_taps(2 * i);
        by_taps(2 * i + 1);
      }
      return;
    }
  }
  if (std::is_same_v<S, float> && !W.idx_tm.empty()) {
    // Vector gathers along the row, the taps' FMAs in the scalar loop's order.
    const float* sf = reinterpret_cast<const float*>(src);
    const int32_t* it = W.idx_tm.data();
    const float* wtm = W.weight_tm.data();
    int64_t o = 0;
    for (; o + kLanes <= W.out; o += kLanes) {
      Vf acc = zero();
      for (int64_t t = 0; t < W.taps; ++t)
        acc = fma(load(wtm + t * W.out + o), gather(sf, it + t * W.out + o), acc);
      store(dst + o, acc);
    }
    for (; o < W.out; ++o) {
      float acc = 0;
      for (int64_t t = 0; t < W.taps; ++t)
        acc = std::fma(wt[o * W.taps + t], sf[idx[o * W.taps + t]], acc);
      dst[o] = from_float<T>(acc);
    }
  } else if (W.taps == 1 && std::is_same_v<S, T>) {
    for (int64_t o = 0; o < W.out; ++o) dst[o] = static_cast<T>(src[idx[o]]);
  } else {
    for (int64_t o = 0; o < W.out; ++o) {
      float acc = 0;
      for (int64_t t = 0; t < W.taps; ++t)
        acc = std::fma(wt[o * W.taps + t], to_float(src[idx[o * W.taps + t]]), acc);
      dst[o] = from_float<T>(acc);
    }
  }
  fill_outside_columns(p, dst);
}

// dst[0, n) = src[0, n): f32 rows in vectors (short rows are common: a
// library call per 16-float row of a UNet's 8 x 8 map cost more than the
// copy), other types element by element.
template <class T>
inline void copy_row(const T* src, T* dst, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) store(dst + i, load(src + i));
    if (i < n) store_n(dst + i, load_n(src + i, static_cast<int>(n - i)), static_cast<int>(n - i));
  } else {
    std::copy(src, src + n, dst);
  }
}

// Whether output rows oh0 and oh1 (of the same od) mix the same input rows
// with the same weights.
inline bool same_mix(const ResizeDim& H, int64_t oh0, int64_t oh1) {
  for (int64_t t = 0; t < H.taps; ++t)
    if (H.idx[oh0 * H.taps + t] != H.idx[oh1 * H.taps + t] ||
        H.weight[oh0 * H.taps + t] != H.weight[oh1 * H.taps + t])
      return false;
  return H.outside.empty() || H.outside[oh0] == H.outside[oh1];
}

// Nearest doubling along H and W of a 2-D map (the UNet's upsampling):
// each input row widened once by zip2 and stored as both of its output rows,
// with no per-row index work (an 8 x 8 map's 16-float rows spent most of
// their time on it).
// 16-bit values pass through f32 exactly.
template <class T>
void double_rows(const ResizePlan& p, const T* x, T* y) {
  const int64_t w = p.dim[2].in, rows = p.n * p.c * p.dim[1].in;
  const bool nt = w % kLanes == 0 && stream_output<T>(y, rows * 4 * w, 2 * w);
  parallel_for(rows, std::max<int64_t>(1, 4096 / w), [&](int64_t b, int64_t e) {
    const StreamFence fence{nt};
    for (int64_t r = b; r < e; ++r) {
      const T* s = x + r * w;
      T* d0 = y + r * 4 * w;  // output rows 2 ih and 2 ih + 1 of the plane
      T* d1 = d0 + 2 * w;
      int64_t i = 0;
      for (; i + kLanes <= w; i += kLanes) {
        Vf lo, hi;
        const Vf v = load(s + i);
        zip2(v, v, lo, hi);
        store_or_stream(d0 + 2 * i, lo, nt);
        store_or_stream(d0 + 2 * i + kLanes, hi, nt);
        store_or_stream(d1 + 2 * i, lo, nt);
        store_or_stream(d1 + 2 * i + kLanes, hi, nt);
      }
      for (; i < w; ++i) d0[2 * i] = d0[2 * i + 1] = d1[2 * i] = d1[2 * i + 1] = s[i];
    }
  });
}

template <class T>
void channels_first(const ResizePlan& p, const T* x, T* y) {
  if (p.dim[0].in == 1 && p.dim[0].out == 1 && p.dim[1].doubles && p.dim[2].doubles)
    return double_rows(p, x, y);
  const ResizeDim &D = p.dim[0], &H = p.dim[1], &W = p.dim[2];
  const int64_t plane = D.in * H.in * W.in, rows_out = D.out * H.out;
  // Rows wider than the stack row: each column sums its taps directly.
  const bool direct = W.in > kRowFloats;
  const bool nt =
      !direct && W.out <= kRowFloats && stream_output<T>(y, p.n * p.c * rows_out * W.out, W.out);
  parallel_for(p.n * p.c * rows_out, 1, [&](int64_t b, int64_t e) {
    const StreamFence fence{nt};
    alignas(64) float mixed[kRowFloats];
    alignas(64) T built[kRowFloats];
    const T* rows[kMaxRows];
    float wts[kMaxRows];
    conv::RowCursor cur(b, D.out, H.out);
    for (int64_t q = b; q < e; ++q, cur.step()) {
      const int64_t pc = cur.plane, od = cur.od, oh = cur.oh;
      const T* xp = x + pc * plane;
      T* dst = y + q * W.out;
      if ((!D.outside.empty() && D.outside[od]) || (!H.outside.empty() && H.outside[oh])) {
        std::fill(dst, dst + W.out, from_float<T>(p.extrapolation));
        continue;
      }
      int nr = 0;
      for (int64_t a = 0; a < D.taps; ++a)
        for (int64_t bh = 0; bh < H.taps; ++bh, ++nr) {
          rows[nr] = xp + (D.idx[od * D.taps + a] * H.in + H.idx[oh * H.taps + bh]) * W.in;
          wts[nr] = D.weight[od * D.taps + a] * H.weight[oh * H.taps + bh];
        }
      if (direct) {
        for (int64_t o = 0; o < W.out; ++o) {
          float acc = 0;
          for (int r = 0; r < nr; ++r)
            for (int64_t t = 0; t < W.taps; ++t)
              acc = std::fma(wts[r] * W.weight[o * W.taps + t],
                             to_float(rows[r][W.idx[o * W.taps + t]]), acc);
          dst[o] = from_float<T>(acc);
        }
        fill_outside_columns(p, dst);
        continue;
      }
      // An output row with the same input rows and weights as the row before
      // it (nearest upsampling along H repeats every row) is a copy of it.
      // Streamed rows are built in `built` and streamed from there.
      const bool repeat = q > b && oh != 0 && same_mix(H, oh - 1, oh);
      if (!nt && repeat) {
        copy_row(dst - W.out, dst, W.out);
        continue;
      }
      T* out = nt ? built : dst;
      if (!repeat) {
        if (nr == 1 && wts[0] == 1.0f) {
          columns(p, rows[0], out);
        } else {
          mix_rows(rows, wts, nr, W.in, mixed);
          columns(p, static_cast<const float*>(mixed), out);
        }
      }
      if (nt)
        for (int64_t o = 0; o < W.out; o += kLanes) stream(dst + o, load(built + o));
    }
  });
}

template <class T>
void run_t(const ResizePlan& p, const void* x, void* y) {
  if (p.cl)
    channels_last(p, static_cast<const T*>(x), static_cast<T*>(y));
  else
    channels_first(p, static_cast<const T*>(x), static_cast<T*>(y));
}

inline void run(const ResizePlan& p, const void* x, void* y) {
  if (p.t == DType::f32) return run_t<float>(p, x, y);
  if (p.t == DType::bf16) return run_t<bf16>(p, x, y);
  return run_t<f16>(p, x, y);
}

}  // namespace resize_k

// Pooling written once over the vec_*.h names; included by
// pool_{scalar,avx2,avx512}.cc inside their ISA namespace. Max follows
// PyTorch: NaN propagates (a NaN input wins and its index is returned).

namespace pool_k {

using conv::kRunPad;
using conv::PoolDim;
using conv::PoolPlan;

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

// v if v is NaN or greater, else acc (so a NaN anywhere wins, and of equal
// values, +0 and -0 included, the first stays): max(v, acc) is v > acc ? v :
// acc on every ISA (maxps returns its second operand for a NaN or equal
// zeros).
inline Vf take_max(Vf acc, Vf v) { return select(isnan(v), v, max(v, acc)); }

// red[0, n) = the reduction (max, or a sum) of red and the rows src[0, nsrc)
// in order, or of the identity (-inf, 0) and the rows where `first` (red not
// read). Each vector of red is loaded and stored once per call, not once per
// row.
inline constexpr int kRowGroup = 8;
template <bool Max, class T>
void reduce_rows(float* red, const T* const* src, int nsrc, int64_t n, bool first) {
  const auto op = [](Vf acc, Vf v) { return Max ? take_max(acc, v) : acc + v; };
  const Vf id = Max ? set1(-INFINITY) : zero();
  int64_t i = 0;
  // Two vectors at a time: two independent chains through the rows.
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    Vf a0 = first ? id : load(red + i), a1 = first ? id : load(red + i + kLanes);
    for (int r = 0; r < nsrc; ++r) {
      a0 = op(a0, load(src[r] + i));
      a1 = op(a1, load(src[r] + i + kLanes));
    }
    store(red + i, a0);
    store(red + i + kLanes, a1);
  }
  for (; i + kLanes <= n; i += kLanes) {
    Vf acc = first ? id : load(red + i);
    for (int r = 0; r < nsrc; ++r) acc = op(acc, load(src[r] + i));
    store(red + i, acc);
  }
  if (i < n) {
    const int nl = static_cast<int>(n - i);
    Vf acc = first ? id : load_n(red + i, nl);
    for (int r = 0; r < nsrc; ++r) acc = op(acc, load_n(src[r] + i, nl));
    store_n(red + i, acc, nl);
  }
}

// Feeds rows to reduce_rows kRowGroup at a time; finish() after the last
// (a window of no rows leaves the identity).
template <class T>
class RowReducer {
 public:
  RowReducer(float* red, int64_t n, bool is_max) : red_(red), n_(n), max_(is_max) {}
  void add(const T* row) {
    rows_[nr_++] = row;
    if (nr_ == kRowGroup) flush();
  }
  void finish() {
    if (nr_ > 0 || first_) flush();
  }

 private:
  void flush() {
    if (max_)
      reduce_rows<true>(red_, rows_, nr_, n_, first_);
    else
      reduce_rows<false>(red_, rows_, nr_, n_, first_);
    first_ = false;
    nr_ = 0;
  }
  float* red_;
  int64_t n_;
  bool max_, first_ = true;
  int nr_ = 0;
  const T* rows_[kRowGroup];
};

// Channels last: tasks of (image, output pixel, block of kChanBlock
// channels), so that a global pool (one output pixel) still spreads over the
// threads. A task walks its window's pixels in order, each pixel's channel
// block a contiguous run reduced into a row of floats on the stack.
inline constexpr int64_t kChanBlock = 512;

template <class T>
void channels_last(const PoolPlan& p, const T* x, T* y) {
  const PoolDim &D = p.dim[0], &H = p.dim[1], &W = p.dim[2];
  const int64_t outs = D.out * H.out * W.out, C = p.c;
  const int64_t nblk = (C + kChanBlock - 1) / kChanBlock;
  parallel_for(p.n * outs * nblk, 1, [&](int64_t b, int64_t e) {
    alignas(64) float red[kChanBlock];
    for (int64_t q = b; q < e; ++q) {
      const int64_t po = q / nblk, c0 = q % nblk * kChanBlock;
      const int64_t cn = std::min(kChanBlock, C - c0);
      const int64_t n = po / outs, o = po % outs;
      const int64_t od = o / (H.out * W.out), oh = o / W.out % H.out, ow = o % W.out;
      RowReducer<T> rr(red, cn, p.is_max);
      for (int64_t a = D.first[od]; a < D.first[od + 1]; ++a)
        for (int64_t bh = H.first[oh]; bh < H.first[oh + 1]; ++bh)
          for (int64_t cw = W.first[ow]; cw < W.first[ow + 1]; ++cw)
            rr.add(x + (((n * D.in + D.idx[a]) * H.in + H.idx[bh]) * W.in + W.idx[cw]) * C + c0);
      rr.finish();
      Vf div = set1(1.0f);
      if (!p.is_max)
        div = set1(
            static_cast<float>(1.0 / static_cast<double>(D.count[od] * H.count[oh] * W.count[ow])));
      T* dst = y + po * C + c0;
      for (int64_t c = 0; c < cn; c += kLanes) {
        const int nl = static_cast<int>(std::min<int64_t>(kLanes, cn - c));
        Vf v = load_n(red + c, nl);
        if (!p.is_max) v = v * div;
        store_n(dst + c, v, nl);
      }
    }
  });
}

// Channels first, each output walking its window: max pool with indices, and
// rows wider than channels_first's stack row. ind may be null.
template <class T>
void channels_first_walk(const PoolPlan& p, const T* x, T* y, int64_t* ind) {
  const PoolDim &D = p.dim[0], &H = p.dim[1], &W = p.dim[2];
  const int64_t outs = D.out * H.out * W.out, plane = D.in * H.in * W.in;
  parallel_for(p.n * p.c, 1, [&](int64_t b, int64_t e) {
    for (int64_t pc = b; pc < e; ++pc) {
      const T* xp = x + pc * plane;
      int64_t o = pc * outs;
      for (int64_t od = 0; od < D.out; ++od)
        for (int64_t oh = 0; oh < H.out; ++oh)
          for (int64_t ow = 0; ow < W.out; ++ow, ++o) {
            float acc = p.is_max ? -INFINITY : 0.0f;
            int64_t arg = -1;
            for (int64_t a = D.first[od]; a < D.first[od + 1]; ++a)
              for (int64_t bh = H.first[oh]; bh < H.first[oh + 1]; ++bh) {
                const int64_t row = (D.idx[a] * H.in + H.idx[bh]) * W.in;
                for (int64_t cw = W.first[ow]; cw < W.first[ow + 1]; ++cw) {
                  const float v = to_float(xp[row + W.idx[cw]]);
                  if (!p.is_max) {
                    acc += v;
                  } else if (v > acc || std::isnan(v) || arg < 0) {
                    acc = v;
                    arg = row + W.idx[cw];
                  }
                }
              }
            if (!p.is_max)
              acc = acc * static_cast<float>(
                              1.0 / static_cast<double>(D.count[od] * H.count[oh] * W.count[ow]));
            y[o] = from_float<T>(acc);
            if (ind) ind[o] = arg;
          }
    }
  });
}

// Channels first: one output row (n, c, od, oh) at a time. The window's input
// rows are first reduced column by column into a row of W.in floats
// (vectorised along the row; kRowFloats at most, on the stack), then each
// output column reduces its W window of that row. The window tables were
// built at create: no per-element index arithmetic.
inline constexpr int64_t kRowFloats = 4096;

// Outputs [ow, ow + kLanes) of a window run (PoolDim::run_*) from the row
// `base` = red + run_start, padded with the identity: tap t of the outputs
// is base[S ow + t + S l], a plain load (S = 1) or the even lanes of two
// (S = 2, unzip2, which gives tap t + 1 as the odd lanes). The taps in
// order, as the gathers take the valid ones (an identity tap changes
// nothing: -inf for max, +0 added to a sum that is never -0). K > 0: the
// tap count as a constant (the common 2 and 3), else `taps`.
template <int S, int K, bool Max>
inline Vf window_run(const float* base, int64_t ow, int64_t taps) {
  if constexpr (K > 0) taps = K;
  Vf acc = Max ? set1(-INFINITY) : zero();
  const auto take = [&](Vf v) { acc = Max ? take_max(acc, v) : acc + v; };
  if constexpr (S == 1) {
    for (int64_t t = 0; t < taps; ++t) take(load(base + ow + t));
  } else {
    const float* row = base + 2 * ow;
    for (int64_t t = 0; t < taps; t += 2) {
      Vf ev, od;
      unzip2(load(row + t), load(row + t + kLanes), ev, od);
      take(ev);
      if (t + 1 < taps) take(od);
    }
  }
  return acc;
}

// Whole vectors of outputs [0, out / kLanes * kLanes) of a window run into
// dst (avg: times divs); returns the outputs done.
template <int S, int K, bool Max, class T>
int64_t window_runs(const float* base, int64_t out, int64_t taps, const float* divs, T* dst) {
  int64_t ow = 0;
  for (; ow + kLanes <= out; ow += kLanes) {
    Vf acc = window_run<S, K, Max>(base, ow, taps);
    if constexpr (!Max) acc = acc * load(divs + ow);
    store(dst + ow, acc);
  }
  return ow;
}

template <bool Max, class T>
int64_t window_runs(const PoolDim& W, const float* red, const float* divs, T* dst) {
  const float* base = red + W.run_start;
  const int64_t out = W.out, taps = W.run_taps;
  if (W.run_stride == 1)
    return taps == 3 ? window_runs<1, 3, Max>(base, out, taps, divs, dst)
                     : window_runs<1, 0, Max>(base, out, taps, divs, dst);
  return taps == 2   ? window_runs<2, 2, Max>(base, out, taps, divs, dst)
         : taps == 3 ? window_runs<2, 3, Max>(base, out, taps, divs, dst)
                     : window_runs<2, 0, Max>(base, out, taps, divs, dst);
}

template <class T>
void channels_first(const PoolPlan& p, const T* x, T* y) {
  const PoolDim &D = p.dim[0], &H = p.dim[1], &W = p.dim[2];
  const int64_t plane = D.in * H.in * W.in, rows_out = D.out * H.out;
  parallel_for(p.n * p.c * rows_out, 1, [&](int64_t b, int64_t e) {
    // The reduced row with kRunPad floats of the identity on either side
    // (RowReducer writes the row's own part only).
    alignas(64) float padded[kRunPad + kRowFloats + kRunPad + kLanes];
    float* red = padded + kRunPad;
    alignas(64) float divs[kRowFloats];
    double div_dh = -1;
    if (W.run_stride) {
      const float id = p.is_max ? -INFINITY : 0.0f;
      for (int64_t i = -kRunPad; i < 0; ++i) red[i] = id;
      for (int64_t i = W.in; i < W.in + kRunPad + kLanes; ++i) red[i] = id;
    }
    conv::RowCursor cur(b, D.out, H.out);
    for (int64_t q = b; q < e; ++q, cur.step()) {
      const int64_t pc = cur.plane, od = cur.od, oh = cur.oh;
      const T* xp = x + pc * plane;
      T* dst = y + q * W.out;
      // The window's input rows kRowGroup at a time (each a sequential stream),
      // the reduced row in L1.
      RowReducer<T> rr(red, W.in, p.is_max);
      for (int64_t a = D.first[od]; a < D.first[od + 1]; ++a)
        for (int64_t bh = H.first[oh]; bh < H.first[oh + 1]; ++bh)
          rr.add(xp + (D.idx[a] * H.in + H.idx[bh]) * W.in);
      rr.finish();
      const double dh = static_cast<double>(D.count[od] * H.count[oh]);
      int64_t ow = 0;
      if (W.run_stride || !W.idx_tm.empty()) {
        // Whole vectors of outputs: window runs, else vector gathers of each
        // window tap; the divisors per column are recomputed only when the
        // row's D x H count changes.
        if (!p.is_max && dh != div_dh) {
          for (int64_t i = 0; i < W.out; ++i)
            divs[i] = static_cast<float>(1.0 / (dh * static_cast<double>(W.count[i])));
          div_dh = dh;
        }
      }
      if (W.run_stride) {
        ow =
            p.is_max ? window_runs<true>(W, red, divs, dst) : window_runs<false>(W, red, divs, dst);
      } else if (!W.idx_tm.empty()) {
        red[W.in] = p.is_max ? -INFINITY : 0.0f;
        for (; ow + kLanes <= W.out; ow += kLanes) {
          Vf acc = p.is_max ? set1(-INFINITY) : zero();
          for (int64_t t = 0; t < W.win; ++t) {
            const Vf v = gather(red, W.idx_tm.data() + t * W.out + ow);
            acc = p.is_max ? take_max(acc, v) : acc + v;
          }
          if (!p.is_max) acc = acc * load(divs + ow);
          store(dst + ow, acc);
        }
      }
      for (; ow < W.out; ++ow) {
        float acc = p.is_max ? -INFINITY : 0.0f;
        for (int64_t cw = W.first[ow]; cw < W.first[ow + 1]; ++cw) {
          const float v = red[W.idx[cw]];
          if (!p.is_max)
            acc += v;
          else if (v > acc || std::isnan(v))
            acc = v;
        }
        if (!p.is_max)
          acc = acc * static_cast<float>(1.0 / (dh * static_cast<double>(W.count[ow])));
        dst[ow] = from_float<T>(acc);
      }
    }
  });
}

template <class T>
void run_t(const PoolPlan& p, const void* x, void* y, int64_t* ind) {
  if (ind)
    channels_first_walk(p, static_cast<const T*>(x), static_cast<T*>(y), ind);
  else if (p.cl)
    channels_last(p, static_cast<const T*>(x), static_cast<T*>(y));
  else if (p.dim[2].in > kRowFloats || p.dim[2].out > kRowFloats)
    channels_first_walk(p, static_cast<const T*>(x), static_cast<T*>(y), nullptr);
  else
    channels_first(p, static_cast<const T*>(x), static_cast<T*>(y));
}

inline void run(const PoolPlan& p, const void* x, void* y, int64_t* ind) {
  if (p.t == DType::f32) return run_t<float>(p, x, y, ind);
  if (p.t == DType::bf16) return run_t<bf16>(p, x, y, ind);
  return run_t<f16>(p, x, y, ind);
}

}  // namespace pool_k

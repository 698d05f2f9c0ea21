// Pooling written once over the vec_*.h names; included by
// pool_{scalar,avx2,avx512}.cc inside their ISA namespace. Max follows
// PyTorch: NaN propagates (a NaN input wins and its index is returned).

namespace pool_k {

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

inline Vf take_max(Vf acc, Vf v) { return select(isnan(v) | (v > acc), v, acc); }

// red[0, n) = the reduction's identity (-inf for max, 0 for a sum), whole
// vectors (red has room for them).
inline void reset_row(float* red, int64_t n, bool is_max) {
  for (int64_t i = 0; i < n; i += kLanes) store(red + i, is_max ? set1(-INFINITY) : zero());
}

// red[i] = max(red[i], src[i]) or red[i] + src[i] for i < n, in vectors.
template <class T>
inline void reduce_into(float* red, const T* src, int64_t n, bool is_max) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vf v = load(src + i), acc = load(red + i);
    store(red + i, is_max ? take_max(acc, v) : acc + v);
  }
  if (i < n) {
    const int nl = static_cast<int>(n - i);
    const Vf v = load_n(src + i, nl), acc = load_n(red + i, nl);
    store_n(red + i, is_max ? take_max(acc, v) : acc + v, nl);
  }
}

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
      reset_row(red, cn, p.is_max);
      for (int64_t a = D.first[od]; a < D.first[od + 1]; ++a)
        for (int64_t bh = H.first[oh]; bh < H.first[oh + 1]; ++bh)
          for (int64_t cw = W.first[ow]; cw < W.first[ow + 1]; ++cw)
            reduce_into(
                red, x + (((n * D.in + D.idx[a]) * H.in + H.idx[bh]) * W.in + W.idx[cw]) * C + c0,
                cn, p.is_max);
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

template <class T>
void channels_first(const PoolPlan& p, const T* x, T* y) {
  const PoolDim &D = p.dim[0], &H = p.dim[1], &W = p.dim[2];
  const int64_t plane = D.in * H.in * W.in, rows_out = D.out * H.out;
  parallel_for(p.n * p.c * rows_out, 1, [&](int64_t b, int64_t e) {
    alignas(64) float red[kRowFloats + kLanes];
    alignas(64) float divs[kRowFloats];
    double div_dh = -1;
    conv::RowCursor cur(b, D.out, H.out);
    for (int64_t q = b; q < e; ++q, cur.step()) {
      const int64_t pc = cur.plane, od = cur.od, oh = cur.oh;
      const T* xp = x + pc * plane;
      T* dst = y + q * W.out;
      // Row by row (each input row one sequential stream), the reduced row in L1.
      reset_row(red, W.in, p.is_max);
      for (int64_t a = D.first[od]; a < D.first[od + 1]; ++a)
        for (int64_t bh = H.first[oh]; bh < H.first[oh + 1]; ++bh)
          reduce_into(red, xp + (D.idx[a] * H.in + H.idx[bh]) * W.in, W.in, p.is_max);
      const double dh = static_cast<double>(D.count[od] * H.count[oh]);
      int64_t ow = 0;
      if (!W.idx_tm.empty()) {
        // Vector gathers of each window tap; the divisors per column are
        // recomputed only when the row's D x H count changes.
        red[W.in] = p.is_max ? -INFINITY : 0.0f;
        if (!p.is_max && dh != div_dh) {
          for (int64_t i = 0; i < W.out; ++i)
            divs[i] = static_cast<float>(1.0 / (dh * static_cast<double>(W.count[i])));
          div_dh = dh;
        }
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

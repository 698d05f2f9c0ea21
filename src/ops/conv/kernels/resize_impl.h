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

inline bool outside(const ResizePlan& p, int64_t od, int64_t oh, int64_t ow) {
  return (!p.dim[0].outside.empty() && p.dim[0].outside[od]) ||
         (!p.dim[1].outside.empty() && p.dim[1].outside[oh]) ||
         (!p.dim[2].outside.empty() && p.dim[2].outside[ow]);
}

template <class T>
void channels_last(const ResizePlan& p, const T* x, T* y) {
  const ResizeDim &D = p.dim[0], &H = p.dim[1], &W = p.dim[2];
  const int64_t outs = D.out * H.out * W.out, C = p.c;
  parallel_for(p.n * outs, 1, [&](int64_t b, int64_t e) {
    for (int64_t q = b; q < e; ++q) {
      const int64_t n = q / outs, o = q % outs;
      const int64_t od = o / (H.out * W.out), oh = o / W.out % H.out, ow = o % W.out;
      T* dst = y + q * C;
      const bool ext = outside(p, od, oh, ow);
      for (int64_t c0 = 0; c0 < C; c0 += kLanes) {
        const int nl = static_cast<int>(std::min<int64_t>(kLanes, C - c0));
        Vf acc = ext ? set1(p.extrapolation) : zero();
        for (int64_t a = 0; a < D.taps && !ext; ++a)
          for (int64_t bh = 0; bh < H.taps; ++bh) {
            const float wdh = D.weight[od * D.taps + a] * H.weight[oh * H.taps + bh];
            const int64_t row =
                (n * D.in + D.idx[od * D.taps + a]) * H.in + H.idx[oh * H.taps + bh];
            for (int64_t cw = 0; cw < W.taps; ++cw) {
              const float wt = wdh * W.weight[ow * W.taps + cw];
              const int64_t pix = row * W.in + W.idx[ow * W.taps + cw];
              acc = fma(set1(wt), load_n(x + pix * C + c0, nl), acc);
            }
          }
        store_n(dst + c0, acc, nl);
      }
    }
  });
}

template <class T>
void channels_first(const ResizePlan& p, const T* x, T* y) {
  const ResizeDim &D = p.dim[0], &H = p.dim[1], &W = p.dim[2];
  const int64_t outs = D.out * H.out * W.out, plane = D.in * H.in * W.in;
  parallel_for(p.n * p.c, 1, [&](int64_t b, int64_t e) {
    for (int64_t pc = b; pc < e; ++pc) {
      const T* xp = x + pc * plane;
      T* yp = y + pc * outs;
      for (int64_t o = 0; o < outs; ++o) {
        const int64_t od = o / (H.out * W.out), oh = o / W.out % H.out, ow = o % W.out;
        if (outside(p, od, oh, ow)) {
          yp[o] = from_float<T>(p.extrapolation);
          continue;
        }
        float acc = 0;
        for (int64_t a = 0; a < D.taps; ++a)
          for (int64_t bh = 0; bh < H.taps; ++bh) {
            const float wdh = D.weight[od * D.taps + a] * H.weight[oh * H.taps + bh];
            const int64_t row = (D.idx[od * D.taps + a] * H.in + H.idx[oh * H.taps + bh]) * W.in;
            for (int64_t cw = 0; cw < W.taps; ++cw)
              acc = std::fma(wdh * W.weight[ow * W.taps + cw],
                             to_float(xp[row + W.idx[ow * W.taps + cw]]), acc);
          }
        yp[o] = from_float<T>(acc);
      }
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

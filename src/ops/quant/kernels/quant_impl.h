// Quantization kernels written once over the vec_*.h / qvec_*.h names;
// included by quant_{scalar,avx2,avx512}.cc inside their ISA namespace.
//
// quantize / dequantize / quantize_dynamic are memory bound: one pass, f32
// arithmetic in the order the references emulate (true division, then
// round-half-even), so integer outputs are exact.
//
// matmul_wq (weight-only int8/int4): the packed weights are streamed once;
// each kLanes-byte load is widened to int32 lanes, the zero point subtracted,
// converted to f32 and FMA'd with the activations (already converted to f32
// and, for int4, permuted so that the low nibbles of a 2*kLanes chunk meet
// x[k even] and the high nibbles x[k odd] without any shuffle of the
// weights). Each group's partial sum is scaled once. Every output element
// is computed by one thread in a fixed order: bit-identical for any thread
// count and for any tile shape.

namespace qk {

template <class T>
inline float to_float(T v) {
  return to_f32(v);
}

inline float zp_value(DType t, const void* zp, int64_t i) {
  if (!zp) return 0.0f;
  if (t == DType::u8) return static_cast<const uint8_t*>(zp)[i];
  if (t == DType::i8) return static_cast<const int8_t*>(zp)[i];
  return static_cast<float>(static_cast<const int32_t*>(zp)[i]);
}

// n (<= kLanes) zero points as f32 lanes.
inline Vf zp_vec(DType t, const void* zp, int64_t i, int n) {
  alignas(64) float buf[kLanes] = {};
  for (int j = 0; j < n; ++j) buf[j] = zp_value(t, zp, i + j);
  return load(buf);
}

inline Vf quantize_vec(Vf x, Vf s, Vf z, Vf lo, Vf hi) {
  Vf q = round(x / s) + z;
  return min(max(q, lo), hi);  // NaN -> lo (max returns its second operand)
}

template <class X>
void quantize_t(const quant::QuantizeArgs& a) {
  const X* x = static_cast<const X*>(a.x);
  uint8_t* y = static_cast<uint8_t*>(a.y);
  const bool u8 = a.yt == DType::u8;
  const Vf lo = set1(u8 ? 0.0f : -128.0f), hi = set1(u8 ? 255.0f : 127.0f);
  const int64_t C = a.channels, I = a.inner;
  if (I == 1 && C > 1) {  // per channel along the last axis: vector over channels
    parallel_for(a.outer, std::max<int64_t>(1, 16384 / C), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o)
        for (int64_t c = 0; c < C; c += kLanes) {
          const int n = static_cast<int>(std::min<int64_t>(kLanes, C - c));
          const Vf s = load_n(a.scale + c, n);
          const Vf z = zp_vec(a.yt, a.zp, c, n);
          const Vf q = quantize_vec(load_n(x + o * C + c, n), s, z, lo, hi);
          store_bytes_n(y + o * C + c, cvt_round(q), n);
        }
    });
    return;
  }
  parallel_for(
      a.outer * C, std::max<int64_t>(1, 16384 / std::max<int64_t>(I, 1)),
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t c = r % C;
          const Vf s = set1(a.scale[c]), z = set1(zp_value(a.yt, a.zp, c));
          const X* xr = x + r * I;
          uint8_t* yr = y + r * I;
          int64_t i = 0;
          for (; i + kLanes <= I; i += kLanes)
            store_bytes_n(yr + i, cvt_round(quantize_vec(load(xr + i), s, z, lo, hi)), kLanes);
          if (i < I) {
            const int n = static_cast<int>(I - i);
            store_bytes_n(yr + i, cvt_round(quantize_vec(load_n(xr + i, n), s, z, lo, hi)), n);
          }
        }
      });
}

// n (<= kLanes) quantized values as int32 lanes.
inline Vi load_q(DType t, const void* p, int64_t i, int n) {
  if (n == kLanes) {
    if (t == DType::i8) return load_s8x(static_cast<const int8_t*>(p) + i);
    if (t == DType::u8) return load_u8x(static_cast<const uint8_t*>(p) + i);
    return loadi(static_cast<const int32_t*>(p) + i);
  }
  alignas(64) int32_t buf[kLanes] = {};
  for (int j = 0; j < n; ++j)
    buf[j] = t == DType::i8   ? static_cast<const int8_t*>(p)[i + j]
             : t == DType::u8 ? static_cast<const uint8_t*>(p)[i + j]
                              : static_cast<const int32_t*>(p)[i + j];
  return loadi(buf);
}

template <class Y>
void dequantize_t(const quant::DequantizeArgs& a) {
  Y* y = static_cast<Y*>(a.y);
  const int64_t C = a.channels, I = a.inner;
  // (q - zp) is formed in int32 and converted once; then one f32 multiply.
  auto deq = [&](Vi q, Vi z, Vf s) { return cvt_f32(q - z) * s; };
  auto zpi = [&](int64_t c) { return static_cast<int32_t>(a.zp ? zp_value(a.xt, a.zp, c) : 0.0f); };
  if (I == 1 && C > 1) {
    parallel_for(a.outer, std::max<int64_t>(1, 16384 / C), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o)
        for (int64_t c = 0; c < C; c += kLanes) {
          const int n = static_cast<int>(std::min<int64_t>(kLanes, C - c));
          const Vi z = a.zp ? load_q(a.xt, a.zp, c, n) : set1i(0);
          store_n(y + o * C + c, deq(load_q(a.xt, a.x, o * C + c, n), z, load_n(a.scale + c, n)),
                  n);
        }
    });
    return;
  }
  parallel_for(a.outer * C, std::max<int64_t>(1, 16384 / std::max<int64_t>(I, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   const int64_t c = r % C;
                   const Vf s = set1(a.scale[c]);
                   const Vi z = set1i(zpi(c));
                   int64_t i = 0;
                   for (; i + kLanes <= I; i += kLanes)
                     store(y + r * I + i, deq(load_q(a.xt, a.x, r * I + i, kLanes), z, s));
                   if (i < I) {
                     const int n = static_cast<int>(I - i);
                     store_n(y + r * I + i, deq(load_q(a.xt, a.x, r * I + i, n), z, s), n);
                   }
                 }
               });
}

template <class X>
void dynamic_t(const quant::DynamicArgs& a) {
  const X* x = static_cast<const X*>(a.x);
  uint8_t* y = static_cast<uint8_t*>(a.y);
  const bool u8 = a.yt == DType::u8;
  const float qmin = a.qmin, qmax = a.qmax;
  const int64_t K = a.cols;
  parallel_for(a.rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(K, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   const X* xr = x + r * K;
                   // Padding lanes load as 0, which the min(0, .)/max(0, .) range includes.
                   Vf vmin = zero(), vmax = zero();
                   for (int64_t i = 0; i < K; i += kLanes) {
                     const int n = static_cast<int>(std::min<int64_t>(kLanes, K - i));
                     const Vf v = n == kLanes ? load(xr + i) : load_n(xr + i, n);
                     vmin = min(vmin, v);
                     vmax = max(vmax, v);
                   }
                   const float xmin = std::min(0.0f, reduce_min(vmin));
                   const float xmax = std::max(0.0f, reduce_max(vmax));
                   float scale, zp;
                   if (a.symmetric) {
                     scale = std::max(-xmin, xmax) / a.sym_levels;
                     zp = u8 ? 128.0f : 0.0f;
                   } else {
                     scale = (xmax - xmin) / a.asym_levels;
                     zp = 0;  // set below once scale is final
                   }
                   if (!(scale > 0.0f) || std::isinf(scale)) scale = 1.0f;
                   if (!a.symmetric) {
                     const float t = qmin - xmin / scale;
                     zp = std::min(std::max(std::nearbyint(t), qmin), qmax);
                   }
                   a.scale[r] = scale;
                   if (u8)
                     static_cast<uint8_t*>(a.zp)[r] = static_cast<uint8_t>(zp);
                   else
                     static_cast<int8_t*>(a.zp)[r] = static_cast<int8_t>(zp);
                   const Vf s = set1(scale), z = set1(zp), lo = set1(qmin), hi = set1(qmax);
                   uint8_t* yr = y + r * K;
                   for (int64_t i = 0; i < K; i += kLanes) {
                     const int n = static_cast<int>(std::min<int64_t>(kLanes, K - i));
                     const Vf v = n == kLanes ? load(xr + i) : load_n(xr + i, n);
                     store_bytes_n(yr + i, cvt_round(quantize_vec(v, s, z, lo, hi)), n);
                   }
                 }
               });
}

// ---- matmul_wq ----------------------------------------------------------------------
// One tile: MR rows of x (xp, f32, permuted for int4) times NR consecutive
// weight rows (one contiguous block of NR * row_bytes). The zero point is
// folded out of the inner loop: sum_k (q - z) x = sum_k q x - z * xsum, with
// xsum the group sums of x (computed once per call). `pf` is the next tile's
// block, prefetched as this one is consumed (DRAM latency hiding).
template <int BITS, int MR, int NR>
inline void wq_tile(const quant::WqArgs& a, const float* xp, const float* xsum, int64_t m0,
                    int64_t n0, int64_t g0, int64_t g1, const uint8_t* pf, float* out) {
  const int64_t K = a.K, gs = a.group, G = K / gs;
  const int64_t row_bytes = BITS == 4 ? K / 2 : K;
  const float zdef = BITS == 4 ? 8.0f : 0.0f;
  constexpr int kStep = (BITS == 4 ? kLanes : 2 * kLanes) * NR;  // bytes of W per k step
  Vf tot[MR][NR];
  float corr[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) {
      tot[i][j] = zero();
      corr[i][j] = 0.0f;
    }
  const uint8_t* w0p = a.w + n0 * row_bytes;
  for (int64_t g = g0; g < g1; ++g) {
    Vf acc0[MR][NR], acc1[MR][NR];
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc0[i][j] = acc1[i][j] = zero();
    for (int64_t k = g * gs; k < (g + 1) * gs; k += 2 * kLanes) {
      __builtin_prefetch(pf);
      if constexpr (kStep > 64) __builtin_prefetch(pf + 64);
      pf += kStep;
      // x: kept in registers across the NR weight rows; with one weight row
      // (the multi-row tiles) used straight from memory to leave registers
      // to the 2 x MR accumulators.
      [[maybe_unused]] Vf x0[NR > 1 ? MR : 1], x1[NR > 1 ? MR : 1];
      if constexpr (NR > 1)
        for (int i = 0; i < MR; ++i) {
          const float* xr = xp + (m0 + i) * K + k;
          x0[i] = load(xr);
          x1[i] = load(xr + kLanes);
        }
      for (int j = 0; j < NR; ++j) {
        const uint8_t* wr = w0p + j * row_bytes;
        Vf w0, w1;
        if constexpr (BITS == 4) {
          const Vi b = load_u8x(wr + k / 2);
          w0 = nibble_lo(b);
          w1 = nibble_hi(b);
        } else {
          const int8_t* ws = reinterpret_cast<const int8_t*>(wr) + k;
          w0 = cvt_f32(load_s8x(ws));
          w1 = cvt_f32(load_s8x(ws + kLanes));
        }
        for (int i = 0; i < MR; ++i) {
          if constexpr (NR > 1 && MR > 1) {  // enough chains: one accumulator per output
            acc0[i][j] = fma(w1, x1[i], fma(w0, x0[i], acc0[i][j]));
          } else if constexpr (NR > 1) {
            acc0[i][j] = fma(w0, x0[i], acc0[i][j]);
            acc1[i][j] = fma(w1, x1[i], acc1[i][j]);
          } else {
            const float* xr = xp + (m0 + i) * K + k;
            acc0[i][j] = fma(w0, load(xr), acc0[i][j]);
            acc1[i][j] = fma(w1, load(xr + kLanes), acc1[i][j]);
          }
        }
      }
    }
    for (int j = 0; j < NR; ++j) {
      const Vf s = set1(a.scales[(n0 + j) * G + g]);
      for (int i = 0; i < MR; ++i) tot[i][j] = fma(acc0[i][j] + acc1[i][j], s, tot[i][j]);
    }
  }
  // The zero-point term, vectorised over the groups: sum_g scale * zp * xsum.
  const DType zt = BITS == 4 ? DType::u8 : DType::i8;
  for (int j = 0; j < NR; ++j) {
    const float* sr = a.scales + (n0 + j) * G;
    for (int i = 0; i < MR; ++i) {
      const float* xs = xsum + (m0 + i) * G;
      Vf c = zero();
      for (int64_t g = g0; g < g1; g += kLanes) {
        const int n = static_cast<int>(std::min<int64_t>(kLanes, g1 - g));
        const Vf z = a.zp ? cvt_f32(load_q(zt, a.zp, (n0 + j) * G + g, n)) : set1(zdef);
        c = fma(load_n(sr + g, n) * z, load_n(xs + g, n), c);
      }
      corr[i][j] = reduce_add(c);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) out[i * NR + j] = reduce_add(tot[i][j]) - corr[i][j];
}

template <int BITS>
inline void wq_tile_any(int mr, int nr, const quant::WqArgs& a, const float* xp, const float* xsum,
                        int64_t m0, int64_t n0, int64_t g0, int64_t g1, const uint8_t* pf,
                        float* out) {
#define OPSNN_WQ_CASE(R, C)                                    \
  case (R)*8 + (C):                                            \
    wq_tile<BITS, R, C>(a, xp, xsum, m0, n0, g0, g1, pf, out); \
    return;
  switch (mr * 8 + nr) {
    OPSNN_WQ_CASE(1, 1)
    OPSNN_WQ_CASE(1, 2)
    OPSNN_WQ_CASE(1, 3)
    OPSNN_WQ_CASE(1, 4)
    OPSNN_WQ_CASE(2, 1)
    OPSNN_WQ_CASE(2, 2)
    OPSNN_WQ_CASE(3, 1)
    OPSNN_WQ_CASE(4, 1)
    OPSNN_WQ_CASE(3, 2)
    OPSNN_WQ_CASE(4, 2)
    OPSNN_WQ_CASE(5, 1)
    OPSNN_WQ_CASE(6, 1)
    OPSNN_WQ_CASE(7, 1)
    OPSNN_WQ_CASE(8, 1)
    default:
      break;
  }
#undef OPSNN_WQ_CASE
}

// 16 rows of 16 bytes transposed: dst[c * 16 + i] = rows[i][c].
// SSE2 (the x86-64 baseline): four rounds of unpacks, 8 -> 16 -> 32 -> 64 bits.
inline void transpose16x16_u8(const uint8_t* const* rows, uint8_t* dst) {
  __m128i r[16], s1[16], s2[16], s3[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[i]));
  // s1[2p + h]: rows 2p, 2p+1; 16-bit units = columns 8h .. 8h+7
  for (int q = 0; q < 8; ++q) {
    s1[2 * q] = _mm_unpacklo_epi8(r[2 * q], r[2 * q + 1]);
    s1[2 * q + 1] = _mm_unpackhi_epi8(r[2 * q], r[2 * q + 1]);
  }
  // s2[4q + 2h + h2]: rows 4q .. 4q+3; 32-bit units = columns 8h + 4h2 .. +3
  for (int q = 0; q < 4; ++q)
    for (int h = 0; h < 2; ++h) {
      const __m128i a = s1[4 * q + h], b = s1[4 * q + 2 + h];
      s2[4 * q + 2 * h] = _mm_unpacklo_epi16(a, b);
      s2[4 * q + 2 * h + 1] = _mm_unpackhi_epi16(a, b);
    }
  // s3[8o + 2c4 + h3]: rows 8o .. 8o+7; 64-bit units = columns 4c4 + 2h3, +1
  for (int o = 0; o < 2; ++o)
    for (int c4 = 0; c4 < 4; ++c4) {
      const __m128i a = s2[8 * o + c4], b = s2[8 * o + 4 + c4];
      s3[8 * o + 2 * c4] = _mm_unpacklo_epi32(a, b);
      s3[8 * o + 2 * c4 + 1] = _mm_unpackhi_epi32(a, b);
    }
  // column 2u (+1): rows 0..7 from s3[u], rows 8..15 from s3[8 + u]
  for (int u = 0; u < 8; ++u) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 32 * u),
                     _mm_unpacklo_epi64(s3[u], s3[8 + u]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 32 * u + 16),
                     _mm_unpackhi_epi64(s3[u], s3[8 + u]));
  }
}

// Weight rows [n0, n0 + rows), all of K, dequantized ((q - zp) * scale in f32:
// exact difference, one rounding) straight into the f32 GEMM engine's packed-B
// layout: panels of nr columns, element (k, j) at dst[(j / nr) * K * nr + k * nr
// + j % nr]; the columns past `rows` up to a multiple of nr are zeros. Per
// block of 16 rows and 16-byte chunk of their weights (16 k for int8, 32 for
// int4): one byte transpose, then one vector per k (and kLanes rows).
//
// kPairs: the AVX512_BF16 engine's layout instead (gemm::bf16dot_pack_b): bf16
// (k even, k odd) pairs as one 32-bit word, word (k/2, j) at
// [(j / nr) * (K/2) * nr + (k/2) * nr + j % nr]; each weight rounded once more,
// f32 -> bf16 to nearest even (finite values only).
template <bool kPairs>
inline void wq_dequant_packed(const quant::WqArgs& a, int64_t n0, int64_t rows, int nr,
                              void* dstv) {
  float* dst = static_cast<float*>(dstv);
  // kPairs: two f32 vectors (k even, k odd) -> one vector of bf16 pair words.
  auto pair_words = [](Vf e, Vf o) {
    auto rnd = [](Vi x) { return x + set1i(0x7fff) + (shr_logic<16>(x) & set1i(1)); };
    return from_bits(shr_logic<16>(rnd(bits(e))) | (rnd(bits(o)) & set1i(-65536)));
  };
  const int64_t K = a.K, gs = a.group, G = K / gs;
  const int64_t row_bytes = a.bits == 4 ? K / 2 : K;
  const int64_t kpc = a.bits == 4 ? 32 : 16;  // k per 16-byte chunk
  const int64_t prow = (rows + nr - 1) / nr * nr;
  const float zdef = a.bits == 4 ? 8.0f : 0.0f;
  static const uint8_t kZeros[16] = {};
  alignas(64) uint8_t tb[256];
  alignas(64) float sv[16], zv[16];
  const uint8_t* rp[16];
  for (int64_t jb = 0; jb < prow; jb += 16) {
    const int valid = static_cast<int>(std::clamp<int64_t>(rows - jb, 0, 16));
    const int jend = static_cast<int>(std::min<int64_t>(16, prow - jb));  // a multiple of kLanes
    for (int64_t g = 0; g < G; ++g) {
      for (int i = 0; i < 16; ++i) {
        const int64_t n = n0 + jb + i;
        sv[i] = i < valid ? a.scales[n * G + g] : 0.0f;
        zv[i] = i >= valid    ? 0.0f
                : !a.zp       ? zdef
                : a.bits == 4 ? static_cast<float>(static_cast<const uint8_t*>(a.zp)[n * G + g])
                              : static_cast<float>(static_cast<const int8_t*>(a.zp)[n * G + g]);
      }
      for (int64_t k0 = g * gs; k0 < (g + 1) * gs; k0 += kpc) {
        const int64_t off = a.bits == 4 ? k0 / 2 : k0;
        for (int i = 0; i < 16; ++i)
          rp[i] = i < valid ? a.w + (n0 + jb + i) * row_bytes + off : kZeros;
        transpose16x16_u8(rp, tb);
        for (int jj = 0; jj < jend; jj += kLanes) {
          const Vf s = load(sv + jj), z = load(zv + jj);
          const int64_t j = jb + jj;
          if constexpr (kPairs) {
            float* d = dst + (j / nr) * (K / 2) * nr + j % nr + (k0 / 2) * nr;
            if (a.bits == 4) {
              for (int c = 0; c < 16; ++c) {
                const Vi b = load_u8x(tb + c * 16 + jj);
                store(d + c * nr, pair_words((nibble_lo(b) - z) * s, (nibble_hi(b) - z) * s));
              }
            } else {
              for (int c = 0; c < 16; c += 2) {
                const Vi b0 = load_s8x(reinterpret_cast<const int8_t*>(tb + c * 16 + jj));
                const Vi b1 = load_s8x(reinterpret_cast<const int8_t*>(tb + (c + 1) * 16 + jj));
                store(d + (c / 2) * nr, pair_words((cvt_f32(b0) - z) * s, (cvt_f32(b1) - z) * s));
              }
            }
            continue;
          }
          float* d = dst + (j / nr) * K * nr + j % nr + k0 * nr;
          if (a.bits == 4) {
            for (int c = 0; c < 16; ++c) {
              const Vi b = load_u8x(tb + c * 16 + jj);
              store(d + (2 * c) * nr, (nibble_lo(b) - z) * s);
              store(d + (2 * c + 1) * nr, (nibble_hi(b) - z) * s);
            }
          } else {
            for (int c = 0; c < 16; ++c) {
              const Vi b = load_s8x(reinterpret_cast<const int8_t*>(tb + c * 16 + jj));
              store(d + c * nr, (cvt_f32(b) - z) * s);
            }
          }
        }
      }
    }
  }
}

// M >= panel_min_m (quant::WqPaths): tasks of panel_cols weight
// rows; each task dequantizes its rows into its workspace slot in the engine's
// packed-B layout and runs the f32 engine (one thread: a nested parallel call
// runs inline) over all M rows of x read in place (f32 or bf16), the bias as
// the epilogue's add. Which slot runs a task does not change its result, and
// the engine's rounding does not depend on the thread count: bit-identical for
// any thread count.
inline void wq_panels(const quant::WqArgs& a) {
  const int64_t M = a.M, N = a.N, K = a.K;
  const gemm::Params p = quant::wq_gemm_params(a.isa, a.xt);
  const bool pairs = p.bf16_dot;
  const int64_t W = quant::wq_panel_cols(a.paths, p.nr, M);
  const int64_t ntasks = (N + W - 1) / W;
  const int nslots = static_cast<int>(
      std::min<int64_t>({static_cast<int64_t>(quant::wq_panel_slots(a.paths, M, N)), ntasks,
                         int64_t{num_threads()}}));
  const quant::WqSlot slot_size = quant::wq_slot(a.paths, M, N, K, a.isa, a.xt, a.yt, a.threads);
  char* base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(a.ws) + 63) & ~uintptr_t{63});
  const gemm::MatView xv{a.x, a.xt, K, 1};
  const int64_t ysz = static_cast<int64_t>(dtype_size(a.yt)),
                bsz = static_cast<int64_t>(dtype_size(a.bt));
  std::atomic<int64_t> next{0};
  parallel_tasks(nslots, [&](int64_t slot) {
    char* slot_p = base + static_cast<size_t>(slot) * slot_size.bytes;
    float* buf = reinterpret_cast<float*>(slot_p);
    const gemm::Workspace gws{slot_p + slot_size.panel, slot_size.engine_threads};
    for (;;) {
      const int64_t t = next.fetch_add(1, std::memory_order_relaxed);
      if (t >= ntasks) break;
      const int64_t n0 = t * W, nn = std::min(W, N - n0);
      if (pairs)
        wq_dequant_packed<true>(a, n0, nn, p.nr, buf);
      else
        wq_dequant_packed<false>(a, n0, nn, p.nr, buf);
      gemm::Epilogue ep;
      if (a.bias)
        ep.add = gemm::MatView{static_cast<const uint8_t*>(a.bias) + n0 * bsz, a.bt, 0, 1};
      const gemm::OutView out{static_cast<uint8_t*>(a.y) + n0 * ysz, a.yt, N};
      if (pairs)
        gemm::bf16dot_run(p, M, nn, K, xv, buf, out, ep, gws);
      else
        gemm::run(p, M, nn, K, xv, buf, DType::f32, out, ep, gws);
    }
  });
}

template <class X, class Y>
void wq_t(const quant::WqArgs& a) {
  if (a.M >= a.paths.panel_min_m) {
    wq_panels(a);
    return;
  }
  const int64_t M = a.M, N = a.N, K = a.K, G = K / a.group;
  float* xp = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(a.ws) + 63) & ~uintptr_t{63});
  float* xsum = xp + M * K;
  const X* x = static_cast<const X*>(a.x);
  // f32 copy of x; for int4 each chunk of 2*kLanes is reordered [even k | odd k].
  // xsum: the group sums of x, in k order.
  for (int64_t m = 0; m < M; ++m) {
    const X* xr = x + m * K;
    float* pr = xp + m * K;
    if (a.bits == 4) {
      for (int64_t c = 0; c < K; c += 2 * kLanes)
        for (int i = 0; i < kLanes; ++i) {
          pr[c + i] = to_float(xr[c + 2 * i]);
          pr[c + kLanes + i] = to_float(xr[c + 2 * i + 1]);
        }
    } else {
      for (int64_t k = 0; k < K; ++k) pr[k] = to_float(xr[k]);
    }
    for (int64_t g = 0; g < G; ++g) {
      float s = 0;
      for (int64_t k = g * a.group; k < (g + 1) * a.group; ++k) s += to_float(xr[k]);
      xsum[m * G + g] = s;
    }
  }
  Y* y = static_cast<Y*>(a.y);
  const int64_t row_bytes = a.bits == 4 ? K / 2 : K;
  constexpr int kNr1 = kLanes >= 16 ? 4 : 2;  // weight rows per tile when M == 1
  constexpr int kMaxMr = 4;                   // x rows per tile when M > 1
  // K blocks (whole groups) so that the x rows of a tile stay in L1 while the
  // weight rows stream past; with one row of x, one block. The per-block sums
  // are added in block order: the blocking depends on (M, K, group) only.
  const int64_t gpb = M == 1 ? G : std::max<int64_t>(1, (32768 / (kMaxMr * 4)) / a.group);
  constexpr int64_t kChunk = 32;  // weight rows per parallel_for chunk
  parallel_for(N, kChunk, [&](int64_t cb, int64_t ce) {
    float out[8] = {};
    float part[8 * kChunk];
    for (int64_t nb = cb; nb < ce; nb += kChunk)
      for (int64_t m0 = 0, ne = std::min(ce, nb + kChunk); m0 < M;) {
        const int mr = M == 1 ? 1 : static_cast<int>(std::min<int64_t>(kMaxMr, M - m0));
        const int nr_max = M == 1 ? kNr1 : (mr <= 2 || kLanes >= 16 ? 2 : 1);
        for (int64_t g0 = 0; g0 < std::max<int64_t>(G, 1); g0 += gpb) {
          const int64_t g1 = std::min(G, g0 + gpb);
          for (int64_t n0 = nb; n0 < ne;) {
            const int nr = static_cast<int>(std::min<int64_t>(nr_max, ne - n0));
            const uint8_t* pf = a.w + (n0 + nr) * row_bytes + g0 * a.group * row_bytes / K;
            if (a.bits == 4)
              wq_tile_any<4>(mr, nr, a, xp, xsum, m0, n0, g0, g1, pf, out);
            else
              wq_tile_any<8>(mr, nr, a, xp, xsum, m0, n0, g0, g1, pf, out);
            for (int i = 0; i < mr; ++i)
              for (int j = 0; j < nr; ++j) {
                float& p = part[i * kChunk + (n0 + j - nb)];
                p = g0 == 0 ? out[i * nr + j] : p + out[i * nr + j];
              }
            n0 += nr;
          }
        }
        for (int i = 0; i < mr; ++i)
          for (int64_t n = nb; n < ne; ++n) {
            float v = part[i * kChunk + (n - nb)];
            if (a.bias)
              v += a.bt == DType::bf16  ? to_f32(static_cast<const bf16*>(a.bias)[n])
                   : a.bt == DType::f16 ? to_f32(static_cast<const f16*>(a.bias)[n])
                                        : static_cast<const float*>(a.bias)[n];
            if constexpr (std::is_same_v<Y, float>)
              y[(m0 + i) * N + n] = v;
            else if constexpr (std::is_same_v<Y, f16>)
              y[(m0 + i) * N + n] = opsnn::to_f16(v);
            else
              y[(m0 + i) * N + n] = opsnn::to_bf16(v);
          }
        m0 += mr;
      }
  });
}

}  // namespace qk

// Calls f(X{}) with X the storage type of the float dtype t: bf16, f16 or float.
template <class F>
inline void with_float_type(DType t, F&& f) {
  if (t == DType::bf16)
    f(bf16{});
  else if (t == DType::f16)
    f(f16{});
  else
    f(float{});
}

inline void quantize(const quant::QuantizeArgs& a) {
  with_float_type(a.xt, [&]<class X>(X) { qk::quantize_t<X>(a); });
}
inline void dequantize(const quant::DequantizeArgs& a) {
  with_float_type(a.yt, [&]<class Y>(Y) { qk::dequantize_t<Y>(a); });
}
inline void quantize_dynamic(const quant::DynamicArgs& a) {
  with_float_type(a.xt, [&]<class X>(X) { qk::dynamic_t<X>(a); });
}
inline void matmul_wq(const quant::WqArgs& a) {
  with_float_type(
      a.xt, [&]<class X>(X) { with_float_type(a.yt, [&]<class Y>(Y) { qk::wq_t<X, Y>(a); }); });
}

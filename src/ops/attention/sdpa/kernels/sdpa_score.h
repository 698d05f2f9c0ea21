// Scores of the many-rows form (lanes over query rows): S^T tiles of Q K^T
// and the bias and boolean mask applied to them. Part of sdpa_impl.h.

#pragma once

#include "ops/attention/sdpa/kernels/sdpa_common.h"

namespace sdpa_impl {

// S^T[j][r] = sum_d K[j][d] * Q^T[d][r] for kRJ keys x NV row vectors. With
// MAX, also mx[r] = max(mx[r], S^T[j][r]) key by key as the scores leave the
// registers: the order of the softmax's own pass over the tile (keys
// ascending, one max per key), so the same bits without reading it again.
template <int NV, bool MAX>
inline void qk_tile(const float* kr, int64_t ldk, const float* qt, int64_t mq, int64_t D,
                    float* stj, int64_t iv, float* mx) {
  Vf acc[kRJ][NV];
  for (int r = 0; r < kRJ; ++r)
    for (int c = 0; c < NV; ++c) acc[r][c] = zero();
  for (int64_t d = 0; d < D; ++d) {
    Vf q[NV];
    for (int c = 0; c < NV; ++c) q[c] = load(qt + d * mq + iv + c * kLanes);
    for (int r = 0; r < kRJ; ++r) {
      const Vf kb = set1(kr[r * ldk + d]);
      for (int c = 0; c < NV; ++c) acc[r][c] = fma(kb, q[c], acc[r][c]);
    }
  }
  for (int r = 0; r < kRJ; ++r)
    for (int c = 0; c < NV; ++c) store(stj + r * mq + iv + c * kLanes, acc[r][c]);
  if constexpr (MAX) {
    for (int c = 0; c < NV; ++c) {
      Vf m = load(mx + iv + c * kLanes);
      for (int r = 0; r < kRJ; ++r) m = max(m, acc[r][c]);
      store(mx + iv + c * kLanes, m);
    }
  }
}

// Scores of kRJ keys (rows kr, stride ldk) against every row vector (with
// MAX, folded into the running maxima mx).
template <bool MAX>
inline void qk_rows(const float* kr, int64_t ldk, const float* qt, int64_t mq, int64_t D,
                    float* stj, float* mx) {
  for (int64_t iv = 0; iv < mq;) {
    const int nv = tile_vectors((mq - iv) / kLanes);
    if (nv == 3)
      qk_tile<3, MAX>(kr, ldk, qt, mq, D, stj, iv, mx);
    else if (nv == 2)
      qk_tile<2, MAX>(kr, ldk, qt, mq, D, stj, iv, mx);
    else
      qk_tile<1, MAX>(kr, ldk, qt, mq, D, stj, iv, mx);
    iv += nv * kLanes;
  }
}

#if defined(__AVX512F__)
#define SDPA_TRANSPOSE 1
// 0 where the kLanes mask bytes m[0..n) are true, -inf where false or past n.
inline Vf mask_bias(const bool* m, int n) {
  const __m128i x = _mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1u), m);
  const __mmask16 k = _mm_cmpneq_epi8_mask(x, _mm_setzero_si128());
  return {_mm512_mask_blend_ps(k, _mm512_set1_ps(kNegInf), _mm512_setzero_ps())};
}
#elif defined(__AVX2__)
#define SDPA_TRANSPOSE 1
inline Vf mask_bias(const bool* m, int n) {
  uint64_t w = 0;
  std::memcpy(&w, m, static_cast<size_t>(n));
  const __m256i x = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(w)));
  const __m256 off = _mm256_castsi256_ps(_mm256_cmpeq_epi32(x, _mm256_setzero_si256()));
  return {_mm256_blendv_ps(_mm256_setzero_ps(), _mm256_set1_ps(kNegInf), off)};
}
#endif

// S^T[j][r] += bias(row r, key j0 + j). One row for all: a broadcast vector
// per key. Else, with unit key stride, kLanes x kLanes tiles: a typed vector
// load along the keys per row, an in-register transpose, one vector add per
// key; otherwise row by row along the keys.
#ifdef SDPA_TRANSPOSE
// S^T[j + c][r] += lane c of row(r, j, nj) for rows [0, rows), keys [0, nk):
// row(r, j, nj) loads keys [j, j + nj) of row r (nj <= kLanes) as one vector;
// the kLanes x kLanes tiles are transposed in registers, then added per key.
template <class RowFn, class Combine>
inline void add_rows_transposed(int64_t rows, int64_t nk, float* st, int64_t mq, RowFn&& row,
                                Combine&& combine) {
  for (int64_t iv = 0; iv < rows; iv += kLanes) {
    const int nr = static_cast<int>(std::min<int64_t>(kLanes, rows - iv));
    for (int64_t j = 0; j < nk; j += kLanes) {
      const int nj = static_cast<int>(std::min<int64_t>(kLanes, nk - j));
      Vf x[kLanes];
      for (int r = 0; r < kLanes; ++r) x[r] = r < nr ? row(iv + r, j, nj) : zero();
      transpose_lanes(x);
      for (int c = 0; c < nj; ++c) {
        float* sp = st + (j + c) * mq + iv;
        store(sp, combine(load(sp), x[c]));
      }
    }
  }
}
#endif

template <class T>
inline void add_bias_tile_t(const T* b, int64_t sj, const int64_t* boff, int64_t rows, int64_t j0,
                            int64_t nk, float* st, int64_t mq, bool one_row) {
  if (one_row) {
    for (int64_t j = 0; j < nk; ++j) {
      const Vf x = set1(to_f32(b[boff[0] + (j0 + j) * sj]));
      for (int64_t iv = 0; iv < mq; iv += kLanes)
        store(st + j * mq + iv, load(st + j * mq + iv) + x);
    }
    return;
  }
#ifdef SDPA_TRANSPOSE
  if (sj == 1)
    return add_rows_transposed(
        rows, nk, st, mq,
        [&](int64_t r, int64_t j, int nj) {
          const T* br = b + boff[r] + j0 + j;
          return nj == kLanes ? load(br) : load_n(br, nj);
        },
        [](Vf s, Vf b) { return s + b; });
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const T* br = b + boff[r] + j0 * sj;
    for (int64_t j = 0; j < nk; ++j) st[j * mq + r] += to_f32(br[j * sj]);
  }
}
inline void add_bias_tile(const opsnn::sdpa::Broadcast4& bias, const int64_t* boff, int64_t rows,
                          int64_t j0, int64_t nk, float* st, int64_t mq, bool one_row) {
  switch (bias.dtype) {
    case DType::bf16:
      return add_bias_tile_t(static_cast<const bf16*>(bias.data), bias.sj, boff, rows, j0, nk, st,
                             mq, one_row);
    case DType::f16:
      return add_bias_tile_t(static_cast<const f16*>(bias.data), bias.sj, boff, rows, j0, nk, st,
                             mq, one_row);
    default:
      return add_bias_tile_t(static_cast<const float*>(bias.data), bias.sj, boff, rows, j0, nk, st,
                             mq, one_row);
  }
}

// S^T[j][r] = -inf where the mask hides key j0 + j from row r.
inline void apply_mask_tile(const opsnn::sdpa::Broadcast4& mask, const int64_t* moff, int64_t rows,
                            int64_t j0, int64_t nk, float* st, int64_t mq, bool one_row) {
  const bool* mk = static_cast<const bool*>(mask.data);
  if (one_row) {
    const Vf ninf = set1(kNegInf);
    for (int64_t j = 0; j < nk; ++j)
      if (!mk[moff[0] + (j0 + j) * mask.sj])
        for (int64_t iv = 0; iv < mq; iv += kLanes) store(st + j * mq + iv, ninf);
    return;
  }
#ifdef SDPA_TRANSPOSE
  if (mask.sj == 1)  // as add_bias_tile_t: a -inf / 0 bias per tile
    return add_rows_transposed(
        rows, nk, st, mq,
        [&](int64_t r, int64_t j, int nj) { return mask_bias(mk + moff[r] + j0 + j, nj); },
        // -inf where masked, whatever the score (a +inf or NaN score of a
        // masked key does not take part).
        [](Vf s, Vf m) { return select(m < zero(), m, s); });
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const bool* mr = mk + moff[r] + j0 * mask.sj;
    for (int64_t j = 0; j < nk; ++j)
      if (!mr[j * mask.sj]) st[j * mq + r] = kNegInf;
  }
}

}  // namespace sdpa_impl

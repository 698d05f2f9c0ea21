// The many-rows form (prefill: lanes over query rows). Part of sdpa_impl.h.

#pragma once

#include "ops/attention/sdpa/kernels/sdpa_common.h"
#include "ops/attention/sdpa/kernels/sdpa_decode.h"
#include "ops/attention/sdpa/kernels/sdpa_score.h"

namespace sdpa_impl {

#ifdef SDPA_TRANSPOSE
// Q^T [D][mq] (qt[d * mq + r] = q(r)[d] * scale, as gather_col) for whole
// blocks of kLanes rows: kLanes x kLanes tiles transposed in registers (a
// strided store per element before: 10-15% of SD cross-attention's profile
// at AVX2). Returns the rows done; q_off(r) is row r's offset in base.
template <class T, class OffFn>
inline int64_t transpose_q(const T* base, OffFn&& q_off, int64_t rows, int64_t D, float scale,
                           float* qt, int64_t mq) {
  const int64_t dv = D / kLanes * kLanes;
  const Vf vs = set1(scale);
  int64_t r = 0;
  for (; r + kLanes <= rows; r += kLanes) {
    const T* q[kLanes];
    for (int c = 0; c < kLanes; ++c) q[c] = base + q_off(r + c);
    for (int64_t d = 0; d < dv; d += kLanes) {
      Vf x[kLanes];
      for (int c = 0; c < kLanes; ++c) x[c] = load(q[c] + d) * vs;
      transpose_lanes(x);
      for (int c = 0; c < kLanes; ++c) store(qt + (d + c) * mq + r, x[c]);
    }
    for (int64_t d = dv; d < D; ++d)
      for (int c = 0; c < kLanes; ++c) qt[d * mq + r + c] = to_f32(q[c][d]) * scale;
  }
  return r;
}
#endif

// O^T[d][r] = alpha[r] * O^T[d][r] + sum_j V[j][d] * P^T[j][r] for RD dims x NV row vectors.
template <int RD, int NV>
inline void pv_tile(const float* vp, int64_t ldv, const float* st, int64_t mq, int64_t nk,
                    float* ot, const float* alpha, int64_t d, int64_t iv) {
  Vf acc[RD][NV];
  for (int c = 0; c < NV; ++c) {
    const Vf a = load(alpha + iv + c * kLanes);
    for (int r = 0; r < RD; ++r) acc[r][c] = load(ot + (d + r) * mq + iv + c * kLanes) * a;
  }
  for (int64_t j = 0; j < nk; ++j) {
    Vf pv[NV];
    for (int c = 0; c < NV; ++c) pv[c] = load(st + j * mq + iv + c * kLanes);
    const float* vr = vp + j * ldv + d;
    for (int r = 0; r < RD; ++r) {
      const Vf vb = set1(vr[r]);
      for (int c = 0; c < NV; ++c) acc[r][c] = fma(vb, pv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < RD; ++r)
    for (int c = 0; c < NV; ++c) store(ot + (d + r) * mq + iv + c * kLanes, acc[r][c]);
}

// One task: its rows against its key range. Writes the normalised output
// (and lse), or with kv_splits > 1 the partial (m, l, O^T) of its split. A
// task of few rows goes to the decode form; the rest is the many-rows form
// (kept in one function: splitting it changes GCC's inlining).
inline void run_task(const Params& p, const RowPlan& rp, int64_t t, float* slot, float* partials) {
  const Task tk = decode_task(p, rp, t);
  if (tk.ng * tk.ni <= kFewRows) return few_rows_task(p, rp, t, tk, slot, partials);
  const int64_t D = p.D, dp = round_up(D, 8);
  const int64_t rows = tk.ng * tk.ni, mq = round_up(rows, kLanes);
  const int64_t mq_max = round_up(p.q_block, opsnn::sdpa::kMaxLanes),
                nk_max = round_up(p.kv_block, 8);
  float* qt = slot;
  float* ot = qt + dp * mq_max;
  float* st = ot + dp * mq_max;
  float* kp = st + nk_max * mq_max;
  float* vp = kp + nk_max * dp;
  float* m = vp + nk_max * dp;
  float* l = m + mq_max;
  float* qpos = l + mq_max;
  float* alpha = qpos + mq_max;
  int64_t* boff = reinterpret_cast<int64_t*>(alpha + mq_max);
  int64_t* moff = boff + mq_max;
#ifdef SDPA_BF16DOT
  // bf16 pairs: Q^T [D/2][mq][2] (in qt's place), V [nk/2][D][2] (in vp's
  // place), P^T [nk/2][mq][2] (after the row data).
  uint16_t* qt16 = reinterpret_cast<uint16_t*>(qt);
  uint16_t* vp16 = reinterpret_cast<uint16_t*>(vp);
  uint16_t* pt16 = reinterpret_cast<uint16_t*>(moff + mq_max);
#endif

  const int64_t lk_b = valid_keys(p, tk.b);
  const int64_t off = lk_b - p.Lq;  // key j is visible to query i iff j <= i + off
  const int64_t chunk = split_chunk(p);
  const int64_t kbeg = tk.split * chunk;
  int64_t kend = std::min(kbeg + chunk, lk_b);
  if (p.causal) kend = std::min(kend, tk.i0 + tk.ni - 1 + off + 1);

  // Row r of the task: query head h, position i.
  auto head_pos = [&](int64_t r, int64_t* h, int64_t* i) {
    *h = tk.hkv * rp.G + tk.g0 + r / tk.ni;
    *i = tk.i0 + r % tk.ni;
  };
  auto q_off = [&](int64_t r) {
    int64_t h, i;
    head_pos(r, &h, &i);
    return tk.b * p.qsb + h * p.qsh + i * p.qsl;
  };
  [[maybe_unused]] int64_t r_t = 0;  // rows [0, r_t) of Q^T filled by transpose_q
#if defined(SDPA_TRANSPOSE) && !defined(SDPA_BF16DOT)
  switch (p.dtype) {
    case DType::bf16:
      r_t = transpose_q(static_cast<const bf16*>(p.q), q_off, rows, D, p.scale, qt, mq);
      break;
    case DType::f16:
      r_t = transpose_q(static_cast<const f16*>(p.q), q_off, rows, D, p.scale, qt, mq);
      break;
    default:
      r_t = transpose_q(static_cast<const float*>(p.q), q_off, rows, D, p.scale, qt, mq);
  }
#endif
  for (int64_t r = 0; r < mq; ++r) {
    m[r] = kNegInf;
    l[r] = 0;
    if (r < rows) {
      int64_t h, i;
      head_pos(r, &h, &i);
      const int64_t qo = q_off(r);
#ifdef SDPA_BF16DOT
      const uint16_t* qs = reinterpret_cast<const uint16_t*>(p.q) + qo;
      for (int64_t d = 0; d < D; ++d) qt16[((d >> 1) * mq + r) * 2 + (d & 1)] = qs[d];
#else
      if (r >= r_t) gather_col(p.q, p.dtype, qo, qt + r, mq, D, p.scale);
#endif
      qpos[r] = static_cast<float>(i);
      boff[r] = tk.b * p.bias.sb + h * p.bias.sh + i * p.bias.si;
      moff[r] = tk.b * p.mask.sb + h * p.mask.sh + i * p.mask.si;
    } else {
#ifdef SDPA_BF16DOT
      for (int64_t d = 0; d < D; ++d) qt16[((d >> 1) * mq + r) * 2 + (d & 1)] = 0;
#else
      for (int64_t d = 0; d < D; ++d) qt[d * mq + r] = 0;
#endif
      qpos[r] = 3e38f;
    }
  }
  for (int64_t x = 0; x < D * mq; ++x) ot[x] = 0;

    // A bias / mask that does not vary over the task's rows (a key-padding
    // mask, a per-key bias) is one row: applied as whole vectors per key.
#ifndef SDPA_BF16DOT
  const bool direct = p.dtype == DType::f32 && !p.k.block_table && !p.v.block_table;
#endif
  const bool one_bias_row = p.bias.si == 0 && (p.bias.sh == 0 || tk.ng == 1);
  const bool one_mask_row = p.mask.si == 0 && (p.mask.sh == 0 || tk.ng == 1);
  const Vf neg_inf = set1(kNegInf), neg_max = set1(-3.4028235e38f);
  for (int64_t j0 = kbeg; j0 < kend; j0 += p.kv_block) {
    const int64_t nk = std::min(p.kv_block, kend - j0);
    if (p.mask.data && !any_visible(p, moff, one_mask_row ? 1 : rows, j0, nk))
      continue;  // tile wholly masked: skip it
    const bool causal_cut = p.causal && j0 + nk - 1 > tk.i0 + off;
#ifdef SDPA_BF16DOT
    constexpr bool max_in_qk = false;  // bf16dot::scores keeps no maxima
#else
    const bool max_in_qk = !p.bias.data && !p.mask.data && !causal_cut;
#endif
    // mb folded with the scores of keys [j, nk) of row vector iv, keys ascending.
    const auto fold_max = [&](int64_t iv, int64_t j, Vf mb) {
      for (; j < nk; ++j) mb = max(mb, load(st + j * mq + iv));
      return mb;
    };
#ifdef SDPA_BF16DOT
    bf16dot::pack_v(p, tk.b, tk.hkv, j0, nk, vp16);
    bf16dot::scores(p, tk.b, tk.hkv, j0, nk, qt16, mq, st);
#else
    // f32 K/V rows at a constant stride (not paged) are read in place;
    // otherwise (bf16/f16 conversion, paged) packed into f32 rows.
    const float* kb = kp;
    const float* vb = vp;
    int64_t ldk = dp, ldv = dp;
    if (direct) {
      kb = static_cast<const float*>(p.k.data) + p.k.offset(tk.b, tk.hkv, j0);
      vb = static_cast<const float*>(p.v.data) + p.v.offset(tk.b, tk.hkv, j0);
      ldk = p.k.sl;
      ldv = p.v.sl;
    } else {
      for (int64_t j = 0; j < nk; ++j) {
        load_row(p.k.data, p.dtype, p.k.offset(tk.b, tk.hkv, j0 + j), kp + j * dp, D);
        load_row(p.v.data, p.dtype, p.v.offset(tk.b, tk.hkv, j0 + j), vp + j * dp, D);
      }
    }
    // Scores; the last keys (fewer than kRJ) from a zero-padded copy. With
    // nothing to change them afterwards (bias, mask, the causal diagonal),
    // the tile's row maxima are taken as the scores are stored (into alpha,
    // which the softmax below reads before overwriting).
    const int64_t nkf = nk / kRJ * kRJ;
    if (max_in_qk) {
      for (int64_t iv = 0; iv < mq; iv += kLanes) store(alpha + iv, neg_inf);
      for (int64_t j = 0; j < nkf; j += kRJ)
        qk_rows<true>(kb + j * ldk, ldk, qt, mq, D, st + j * mq, alpha);
    } else {
      for (int64_t j = 0; j < nkf; j += kRJ)
        qk_rows<false>(kb + j * ldk, ldk, qt, mq, D, st + j * mq, nullptr);
    }
    if (nkf < nk) {
      float* kt = kp + nkf * dp;
      for (int64_t j = nkf; j < nk; ++j)
        if (direct) load_row(p.k.data, p.dtype, p.k.offset(tk.b, tk.hkv, j0 + j), kp + j * dp, D);
      for (int64_t j = nk; j < nkf + kRJ; ++j)
        for (int64_t d = 0; d < D; ++d) kp[j * dp + d] = 0;
      qk_rows<false>(kt, dp, qt, mq, D, st + nkf * mq, nullptr);
      if (max_in_qk)  // the real keys of the padded tile only
        for (int64_t iv = 0; iv < mq; iv += kLanes)
          store(alpha + iv, fold_max(iv, nkf, load(alpha + iv)));
    }
#endif
    // Masks. Causal only where the block crosses the diagonal of the first row.
    // The bias first, then the masks: a masked key is -inf whatever its bias.
    if (p.bias.data) add_bias_tile(p.bias, boff, rows, j0, nk, st, mq, one_bias_row);
    if (causal_cut) {
      for (int64_t j = 0; j < nk; ++j) {
        const Vf lim = set1(static_cast<float>(j0 + j - off));
        for (int64_t iv = 0; iv < mq; iv += kLanes) {
          const Vf s = load(st + j * mq + iv);
          store(st + j * mq + iv, select(load(qpos + iv) < lim, neg_inf, s));
        }
      }
    }
    if (p.mask.data) apply_mask_tile(p.mask, moff, rows, j0, nk, st, mq, one_mask_row);
    // Online softmax: new running max, rescale factor, P = exp(S - m) in place.
    for (int64_t iv = 0; iv < mq; iv += kLanes) {
      const Vf mb = max_in_qk ? load(alpha + iv) : fold_max(iv, 0, neg_inf);
      const Vf mo = load(m + iv), mn = max(mo, mb);
      const Vf ms = select(mn < neg_max, zero(), mn);  // a row masked so far stays at 0
      const Vf a = select(mo < neg_max, zero(), vexp_nonpos(mo - ms));
      store(alpha + iv, a);
      store(m + iv, mn);
      Vf sum = zero();
      for (int64_t j = 0; j < nk; ++j) {
        const Vf s = load(st + j * mq + iv);
        // A masked score (-inf) gives exactly 0 without a select: ms is
        // finite or +inf, and vexp_nonpos(-inf) is 0 (three operations per
        // vector fewer at AVX2, where the select took a compare, a vpcmpgtd
        // and an andnot).
        const Vf pr = vexp_nonpos(s - ms);
        store(st + j * mq + iv, pr);
        sum = sum + pr;
      }
      store(l + iv, fma(load(l + iv), a, sum));
    }
#ifdef SDPA_BF16DOT
    bf16dot::accumulate(st, mq, nk, vp16, D, ot, alpha, pt16);
#else
    // O^T = alpha O^T + V^T P^T.
    int64_t d = 0;
    for (; d + kRD <= D; d += kRD) {
      for (int64_t iv = 0; iv < mq;) {
        const int nv = tile_vectors((mq - iv) / kLanes);
        if (nv == 3)
          pv_tile<kRD, 3>(vb, ldv, st, mq, nk, ot, alpha, d, iv);
        else if (nv == 2)
          pv_tile<kRD, 2>(vb, ldv, st, mq, nk, ot, alpha, d, iv);
        else
          pv_tile<kRD, 1>(vb, ldv, st, mq, nk, ot, alpha, d, iv);
        iv += nv * kLanes;
      }
    }
    for (; d < D; ++d)
      for (int64_t iv = 0; iv < mq; iv += kLanes)
        pv_tile<1, 1>(vb, ldv, st, mq, nk, ot, alpha, d, iv);
#endif
  }

  if (p.kv_splits > 1) {
    float* pt = partials + t * mq_max * (D + 2);
    for (int64_t r = 0; r < rows; ++r) {
      float* pr = pt + r * (D + 2);
      pr[0] = m[r];
      pr[1] = l[r];
      for (int64_t dd = 0; dd < D; ++dd) pr[2 + dd] = ot[dd * mq + r];
    }
    return;
  }
  auto out_off = [&](int64_t r, int64_t* hq, int64_t* iq) {
    head_pos(r, hq, iq);
    return tk.b * p.osb + *hq * p.osh + *iq * p.osl;
  };
  int64_t r = 0;
#ifdef SDPA_TRANSPOSE
  // f32 output: kLanes rows x kLanes columns of O^T at a time, transposed in
  // registers, so each row's columns go out as whole vectors (scatter_col
  // reads O^T with a stride per element), as Q^T is built. The same product
  // o * (1 / l) per element as scatter_col.
  if (p.dtype == DType::f32) {
    const int64_t dv = D / kLanes * kLanes;
    for (; r + kLanes <= rows; r += kLanes) {
      bool zero_l = false;
      for (int q = 0; q < kLanes; ++q) zero_l |= l[r + q] == 0;
      if (zero_l) break;  // the rest row by row
      float* orow[kLanes];
      Vf inv[kLanes];
      for (int q = 0; q < kLanes; ++q) {
        int64_t hq, iq;
        orow[q] = static_cast<float*>(p.out) + out_off(r + q, &hq, &iq);
        inv[q] = set1(1.0f / l[r + q]);
        if (p.lse) p.lse[(tk.b * p.Hq + hq) * p.Lq + iq] = lse_of(m[r + q], l[r + q]);
      }
      for (int64_t d = 0; d < dv; d += kLanes) {
        Vf x[kLanes];
        for (int c = 0; c < kLanes; ++c) x[c] = load(ot + (d + c) * mq + r);
        transpose_lanes(x);
        for (int q = 0; q < kLanes; ++q) store(orow[q] + d, x[q] * inv[q]);
      }
      for (int q = 0; q < kLanes; ++q)
        for (int64_t d = dv; d < D; ++d) orow[q][d] = ot[d * mq + r + q] * (1.0f / l[r + q]);
    }
  }
#endif
  for (; r < rows; ++r) {
    int64_t h, i;
    const int64_t oo = out_off(r, &h, &i);
    if (l[r] == 0)
      put_zeros(p.out, p.dtype, oo, D);
    else
      scatter_col(ot + r, mq, p.out, p.dtype, oo, D, 1.0f / l[r]);
    if (p.lse) p.lse[(tk.b * p.Hq + h) * p.Lq + i] = lse_of(m[r], l[r]);
  }
}

}  // namespace sdpa_impl

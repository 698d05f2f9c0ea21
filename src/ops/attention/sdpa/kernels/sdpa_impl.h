// The flash-attention kernel written once over the vec_*.h names; included by
// sdpa_{scalar,avx2,avx512}.cc inside their ISA namespace. See sdpa.h for the
// algorithm and the data layout of the tiles.

namespace sdpa_impl {

using opsnn::sdpa::Params;
using opsnn::sdpa::round_up;
using opsnn::sdpa::RowPlan;

// Keys per register tile of the score kernel (rows of S^T); vectors of rows.
inline constexpr int kRJ = kLanes == 8 ? 4 : 8;
inline constexpr int kRD = kLanes == 8 ? 4 : 8;
inline constexpr float kNegInf = -__builtin_inff();

inline float elem(const void* base, DType t, int64_t i) {
  switch (t) {
    case DType::bf16:
      return bf16_bits_to_f32(static_cast<const bf16*>(base)[i].bits);
    case DType::f16:
      return f16_bits_to_f32(static_cast<const f16*>(base)[i].bits);
    default:
      return static_cast<const float*>(base)[i];
  }
}
inline void put(void* base, DType t, int64_t i, float v) {
  switch (t) {
    case DType::bf16:
      static_cast<bf16*>(base)[i].bits = f32_to_bf16_bits(v);
      return;
    case DType::f16:
      static_cast<f16*>(base)[i].bits = f32_to_f16_bits(v);
      return;
    default:
      static_cast<float*>(base)[i] = v;
  }
}

// exp(x) for the softmax, x <= 0 (score minus the running max): inputs below
// -87 give about 1e-38 instead of 0 (they cannot matter next to the max's 1),
// no overflow or NaN handling needed. About half the work of vexp.
inline Vf exp_nonpos(Vf x) {
  x = max(x, set1(-87.0f));
  const Vf n = round(x * set1(1.44269504088896341f));
  Vf r = fnma(n, set1(0.693359375f), x);
  r = fnma(n, set1(-2.12194440e-4f), r);
  static constexpr float c[] = {5.0000001201E-1f, 1.6666665459E-1f, 4.1665795894E-2f,
                                8.3334519073E-3f, 1.3981999507E-3f, 1.9875691500E-4f};
  const Vf pr = fma(poly(r, c), r * r, r + set1(1.0f));
  return pr * from_bits(shl<23>(cvt_round(n) + set1i(127)));
}

template <class T>
inline void load_row_t(const T* src, float* dst, int64_t n) {
  int64_t d = 0;
  for (; d + kLanes <= n; d += kLanes) store(dst + d, load(src + d));
  if (d < n) store_n(dst + d, load_n(src + d, static_cast<int>(n - d)), static_cast<int>(n - d));
}
inline void load_row(const void* base, DType t, int64_t off, float* dst, int64_t n) {
  switch (t) {
    case DType::bf16:
      return load_row_t(static_cast<const bf16*>(base) + off, dst, n);
    case DType::f16:
      return load_row_t(static_cast<const f16*>(base) + off, dst, n);
    default:
      return load_row_t(static_cast<const float*>(base) + off, dst, n);
  }
}

// S^T[j][r] = sum_d K[j][d] * Q^T[d][r] for kRJ keys x NV row vectors.
template <int NV>
inline void qk_tile(const float* kp, int64_t ldk, const float* qt, int64_t mq, int64_t D, float* st,
                    int64_t j, int64_t iv) {
  Vf acc[kRJ][NV];
  for (int r = 0; r < kRJ; ++r)
    for (int c = 0; c < NV; ++c) acc[r][c] = zero();
  const float* kr = kp + j * ldk;
  for (int64_t d = 0; d < D; ++d) {
    Vf q[NV];
    for (int c = 0; c < NV; ++c) q[c] = load(qt + d * mq + iv + c * kLanes);
    for (int r = 0; r < kRJ; ++r) {
      const Vf kb = set1(kr[r * ldk + d]);
      for (int c = 0; c < NV; ++c) acc[r][c] = fma(kb, q[c], acc[r][c]);
    }
  }
  for (int r = 0; r < kRJ; ++r)
    for (int c = 0; c < NV; ++c) store(st + (j + r) * mq + iv + c * kLanes, acc[r][c]);
}

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

// Whether the boolean mask lets any of the task's rows see keys j0..j0+nk.
inline bool any_visible(const Params& p, const int64_t* moff, int64_t rows, int64_t j0,
                        int64_t nk) {
  const bool* mk = static_cast<const bool*>(p.mask.data);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < nk; ++j)
      if (mk[moff[r] + (j0 + j) * p.mask.sj]) return true;
  return false;
}

struct Task {
  int64_t b, hkv, g0, ng, i0, ni, split;
};

inline Task decode_task(const Params& p, const RowPlan& rp, int64_t t) {
  Task k;
  k.split = t % p.kv_splits;
  t /= p.kv_splits;
  const int64_t w = t % rp.tasks_per_kvhead;
  t /= rp.tasks_per_kvhead;
  k.hkv = t % p.Hkv;
  k.b = t / p.Hkv;
  if (p.Lq >= p.q_block) {
    k.g0 = w / rp.q_tiles;
    k.ng = 1;
    k.i0 = (w % rp.q_tiles) * p.q_block;
    k.ni = std::min(p.q_block, p.Lq - k.i0);
  } else {
    k.g0 = w * rp.heads_per_task;
    k.ng = std::min(rp.heads_per_task, rp.G - k.g0);
    k.i0 = 0;
    k.ni = p.Lq;
  }
  return k;
}

inline int64_t valid_keys(const Params& p, int64_t b) {
  return p.key_lens ? std::min(std::max<int64_t>(p.key_lens[b], 0), p.Lk) : p.Lk;
}
inline int64_t split_chunk(const Params& p) {
  return round_up((p.Lk + p.kv_splits - 1) / p.kv_splits, 8);
}

// One task: its rows against its key range. Writes the normalised output
// (and lse), or with kv_splits > 1 the partial (m, l, O^T) of its split.
inline void run_task(const Params& p, const RowPlan& rp, int64_t t, float* slot, float* partials) {
  const Task tk = decode_task(p, rp, t);
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

  for (int64_t r = 0; r < mq; ++r) {
    m[r] = kNegInf;
    l[r] = 0;
    if (r < rows) {
      const int64_t h = tk.hkv * rp.G + tk.g0 + r / tk.ni, i = tk.i0 + r % tk.ni;
      const int64_t qo = tk.b * p.qsb + h * p.qsh + i * p.qsl;
#ifdef SDPA_BF16DOT
      const uint16_t* qs = reinterpret_cast<const uint16_t*>(p.q) + qo;
      for (int64_t d = 0; d < D; ++d) qt16[((d >> 1) * mq + r) * 2 + (d & 1)] = qs[d];
#else
      for (int64_t d = 0; d < D; ++d) qt[d * mq + r] = elem(p.q, p.dtype, qo + d) * p.scale;
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

  const Vf neg_inf = set1(kNegInf), neg_max = set1(-3.4028235e38f);
  for (int64_t j0 = kbeg; j0 < kend; j0 += p.kv_block) {
    const int64_t nk = std::min(p.kv_block, kend - j0);
    if (p.mask.data && !any_visible(p, moff, rows, j0, nk))
      continue;  // tile wholly masked: skip it
#ifdef SDPA_BF16DOT
    bf16dot::pack_v(p, tk.b, tk.hkv, j0, nk, vp16);
    bf16dot::scores(p, tk.b, tk.hkv, j0, nk, qt16, mq, st);
#else
    const int64_t nkp = round_up(nk, kRJ);
    for (int64_t j = 0; j < nk; ++j) {
      load_row(p.k.data, p.dtype, p.k.offset(tk.b, tk.hkv, j0 + j), kp + j * dp, D);
      load_row(p.v.data, p.dtype, p.v.offset(tk.b, tk.hkv, j0 + j), vp + j * dp, D);
    }
    for (int64_t j = nk; j < nkp; ++j)
      for (int64_t d = 0; d < D; ++d) kp[j * dp + d] = 0;
    // Scores.
    for (int64_t j = 0; j < nkp; j += kRJ) {
      int64_t iv = 0;
      for (; iv + 2 * kLanes <= mq; iv += 2 * kLanes) qk_tile<2>(kp, dp, qt, mq, D, st, j, iv);
      if (iv < mq) qk_tile<1>(kp, dp, qt, mq, D, st, j, iv);
    }
#endif
    // Masks. Causal only where the block crosses the diagonal of the first row.
    if (p.causal && j0 + nk - 1 > tk.i0 + off) {
      for (int64_t j = 0; j < nk; ++j) {
        const Vf lim = set1(static_cast<float>(j0 + j - off));
        for (int64_t iv = 0; iv < mq; iv += kLanes) {
          const Vf s = load(st + j * mq + iv);
          store(st + j * mq + iv, select(load(qpos + iv) < lim, neg_inf, s));
        }
      }
    }
    if (p.bias.data)
      for (int64_t j = 0; j < nk; ++j)
        for (int64_t r = 0; r < rows; ++r)
          st[j * mq + r] += elem(p.bias.data, p.bias.dtype, boff[r] + (j0 + j) * p.bias.sj);
    if (p.mask.data) {
      const bool* mk = static_cast<const bool*>(p.mask.data);
      for (int64_t j = 0; j < nk; ++j)
        for (int64_t r = 0; r < rows; ++r)
          if (!mk[moff[r] + (j0 + j) * p.mask.sj]) st[j * mq + r] = kNegInf;
    }
    // Online softmax: new running max, rescale factor, P = exp(S - m) in place.
    for (int64_t iv = 0; iv < mq; iv += kLanes) {
      Vf mb = neg_inf;
      for (int64_t j = 0; j < nk; ++j) mb = max(mb, load(st + j * mq + iv));
      const Vf mo = load(m + iv), mn = max(mo, mb);
      const Vf ms = select(mn < neg_max, zero(), mn);  // a row masked so far stays at 0
      const Vf a = select(mo < neg_max, zero(), exp_nonpos(mo - ms));
      store(alpha + iv, a);
      store(m + iv, mn);
      Vf sum = zero();
      for (int64_t j = 0; j < nk; ++j) {
        const Vf s = load(st + j * mq + iv);
        const Vf pr = select(s < neg_max, zero(), exp_nonpos(s - ms));
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
      int64_t iv = 0;
      for (; iv + 2 * kLanes <= mq; iv += 2 * kLanes)
        pv_tile<kRD, 2>(vp, dp, st, mq, nk, ot, alpha, d, iv);
      if (iv < mq) pv_tile<kRD, 1>(vp, dp, st, mq, nk, ot, alpha, d, iv);
    }
    for (; d < D; ++d)
      for (int64_t iv = 0; iv < mq; iv += kLanes)
        pv_tile<1, 1>(vp, dp, st, mq, nk, ot, alpha, d, iv);
#endif
  }

  if (p.kv_splits > 1) {
    float* pt = partials + t * mq_max * (D + 2);
    for (int64_t r = 0; r < rows; ++r) {
      pt[r] = m[r];
      pt[mq_max + r] = l[r];
      for (int64_t dd = 0; dd < D; ++dd) pt[(2 + dd) * mq_max + r] = ot[dd * mq + r];
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = tk.hkv * rp.G + tk.g0 + r / tk.ni, i = tk.i0 + r % tk.ni;
    const float inv = l[r] > 0 ? 1.0f / l[r] : 0.0f;
    const int64_t oo = tk.b * p.osb + h * p.osh + i * p.osl;
    for (int64_t dd = 0; dd < D; ++dd) put(p.out, p.dtype, oo + dd, ot[dd * mq + r] * inv);
    if (p.lse) p.lse[(tk.b * p.Hq + h) * p.Lq + i] = l[r] > 0 ? m[r] + std::log(l[r]) : kNegInf;
  }
}

// Combines the splits of base task `bt` in split order (fixed: bit-identical
// results for any thread count).
inline void merge_task(const Params& p, const RowPlan& rp, int64_t bt, const float* partials) {
  const Task tk = decode_task(p, rp, bt * p.kv_splits);
  const int64_t D = p.D, mq_max = round_up(p.q_block, opsnn::sdpa::kMaxLanes),
                stride = mq_max * (D + 2);
  const float* base = partials + bt * p.kv_splits * stride;
  const int64_t rows = tk.ng * tk.ni;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = tk.hkv * rp.G + tk.g0 + r / tk.ni, i = tk.i0 + r % tk.ni;
    float mx = kNegInf;
    for (int64_t s = 0; s < p.kv_splits; ++s)
      if (base[s * stride + mq_max + r] > 0) mx = std::max(mx, base[s * stride + r]);
    float lsum = 0;
    for (int64_t s = 0; s < p.kv_splits; ++s) {
      const float ls = base[s * stride + mq_max + r];
      if (ls > 0) lsum += ls * std::exp(base[s * stride + r] - mx);
    }
    const int64_t oo = tk.b * p.osb + h * p.osh + i * p.osl;
    const float inv = lsum > 0 ? 1.0f / lsum : 0.0f;
    for (int64_t d = 0; d < D; ++d) {
      float acc = 0;
      for (int64_t s = 0; s < p.kv_splits; ++s) {
        const float ls = base[s * stride + mq_max + r];
        if (ls > 0)
          acc += base[s * stride + (2 + d) * mq_max + r] * std::exp(base[s * stride + r] - mx);
      }
      put(p.out, p.dtype, oo + d, acc * inv);
    }
    if (p.lse) p.lse[(tk.b * p.Hq + h) * p.Lq + i] = lsum > 0 ? mx + std::log(lsum) : kNegInf;
  }
}

inline void run(const Params& p, void* workspace, int slots) {
  const RowPlan rp = opsnn::sdpa::row_plan(p);
  const int64_t ntasks = p.B * p.Hkv * rp.tasks_per_kvhead * p.kv_splits;
  if (ntasks == 0) return;
  const int64_t slot_stride = round_up(static_cast<int64_t>(opsnn::sdpa::slot_floats(p)), 16);
  float* base = static_cast<float*>(workspace);
  float* partials = base + static_cast<int64_t>(slots) * slot_stride;
  const int nslots = std::max(1, std::min(slots, num_threads()));
  std::atomic<int64_t> next{0};
  // Each slot pulls tasks until none are left; which slot runs a task does
  // not change its result. Later tasks (longer under causal masking) first.
  parallel_tasks(nslots, [&](int64_t s) {
    float* slot = base + s * slot_stride;
    for (;;) {
      const int64_t n = next.fetch_add(1, std::memory_order_relaxed);
      if (n >= ntasks) break;
      run_task(p, rp, ntasks - 1 - n, slot, partials);
    }
  });
  if (p.kv_splits > 1)
    parallel_for(ntasks / p.kv_splits, 1, [&](int64_t b, int64_t e) {
      for (int64_t bt = b; bt < e; ++bt) merge_task(p, rp, bt, partials);
    });
}

}  // namespace sdpa_impl

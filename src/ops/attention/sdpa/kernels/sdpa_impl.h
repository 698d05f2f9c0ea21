// The flash-attention kernel written once over the vec_*.h names; included by
// sdpa_{scalar,avx2,avx512}.cc inside their ISA namespace. See sdpa.h for the
// algorithm and the data layout of the tiles. The pieces: sdpa_common.h
// (element access, masks, task decoding), sdpa_score.h (many-rows scores),
// sdpa_decode.h (the few-rows form), sdpa_prefill.h (the many-rows form and
// run_task); here the merge of key splits and run. Each piece includes the
// pieces it uses (#pragma once: each ISA file includes this once). The
// machine code is the same as from the single header this was split from.

#include "ops/attention/sdpa/kernels/sdpa_common.h"
#include "ops/attention/sdpa/kernels/sdpa_prefill.h"

namespace sdpa_impl {

// Combines the splits of base task `bt` in split order (fixed: bit-identical
// results for any thread count).
inline void merge_task(const Params& p, const RowPlan& rp, int64_t bt, const float* partials) {
  const Task tk = decode_task(p, rp, bt * p.kv_splits);
  const int64_t D = p.D, mq_max = round_up(p.q_block, opsnn::sdpa::kMaxLanes),
                stride = mq_max * (D + 2);
  const float* base = partials + bt * p.kv_splits * stride;
  const int64_t rows = tk.ng * tk.ni;
  float w[opsnn::sdpa::kMaxSplits];
  alignas(64) float acc[1024];  // D <= 1024
  // The few-rows path leaves bf16 partials in the split layout.
  const int64_t dt = rows <= kFewRows && p.dtype == DType::bf16 ? D / (2 * kLanes) * 2 * kLanes : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = tk.hkv * rp.G + tk.g0 + r / tk.ni, i = tk.i0 + r % tk.ni;
    const float* pr = base + r * (D + 2);  // split s: pr + s * stride
    float mx = kNegInf;
    bool nan = false;  // a NaN score in any split makes the row NaN
    for (int64_t s = 0; s < p.kv_splits; ++s) {
      nan |= std::isnan(pr[s * stride + 1]);
      if (pr[s * stride + 1] > 0) mx = std::max(mx, pr[s * stride]);
    }
    float lsum = nan ? __builtin_nanf("") : 0.0f;
    for (int64_t s = 0; s < p.kv_splits; ++s) {
      const float ls = pr[s * stride + 1];
      w[s] = ls > 0 ? std::exp(pr[s * stride] - mx) : 0.0f;
      lsum += ls * w[s];
    }
    const float inv = lsum > 0 ? 1.0f / lsum : nan ? lsum : 0.0f;
    for (int64_t d = 0; d < D; ++d) acc[d] = 0;
    for (int64_t s = 0; s < p.kv_splits; ++s) {
      if (w[s] == 0) continue;
      const Vf ws = set1(w[s]);
      const float* o = pr + s * stride + 2;
      int64_t d = 0;
      for (; d + kLanes <= D; d += kLanes) store(acc + d, fma(load(o + d), ws, load(acc + d)));
      for (; d < D; ++d) acc[d] = std::fma(o[d], w[s], acc[d]);
    }
    const int64_t oo = tk.b * p.osb + h * p.osh + i * p.osl;
    for (int64_t d = 0; d < D; ++d) put(p.out, p.dtype, oo + d, acc[split_pos(d, dt)] * inv);
    if (p.lse) p.lse[(tk.b * p.Hq + h) * p.Lq + i] = lse_of(mx, lsum);
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

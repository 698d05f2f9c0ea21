// Fused scaled dot-product attention: the kernel interface shared by the ISA
// files (sdpa_{scalar,avx2,avx512}.cc) and the op definition (sdpa.cc).
//
// Algorithm (flash attention, written "transposed"): a task owns up to
// `q_block` query rows of one KV head (rows = (query head of the group, query
// position) pairs, so the heads of a GQA group share every K/V load) and
// walks the keys in blocks of `kv_block`. Scores are kept as S^T[key][row] so
// the vector lanes run over query rows: the running max / sum of the online
// softmax are plain vectors, the score tile is K·Q^T with K broadcast, and
// the output accumulates as O^T[d][row] += V[key][d] * P^T[key][row]. Nothing
// bigger than one score tile per thread is ever written; the workspace does
// not depend on the sequence lengths (except the decode partials, bounded by
// kMaxSplits).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/isa_namespace.h"
#include "opsnn/cpu.h"
#include "opsnn/dtype.h"

namespace opsnn::sdpa {

// Where K (or V) rows live. Contiguous/strided: element (b, h, j, d) at
// data + b*sb + h*sh + j*sl + d. Paged (block_table != nullptr): position j of
// sequence b is in physical block block_table[b*bt_stride + j/block_size] at
// data + block*s_block + h*sh + (j % block_size)*sl + d.
struct KvSource {
  const void* data = nullptr;
  int64_t sb = 0, sh = 0, sl = 0;
  const int32_t* block_table = nullptr;
  int64_t bt_stride = 0, block_size = 0, s_block = 0;

  // always_inline: the ISA-flagged kernels call it, and an out-of-line copy
  // would be a weak symbol compiled with their flags (isa_objects test).
  [[gnu::always_inline]] int64_t offset(int64_t b, int64_t h, int64_t j) const {
    if (!block_table) return b * sb + h * sh + j * sl;
    const int64_t blk = block_table[b * bt_stride + j / block_size];
    return blk * s_block + h * sh + (j % block_size) * sl;
  }
};

// An additive bias (float) or boolean keep-mask broadcast to [B, Hq, Lq, Lk]
// through strides (0 on broadcast dims).
struct Broadcast4 {
  const void* data = nullptr;
  DType dtype = DType::f32;
  int64_t sb = 0, sh = 0, si = 0, sj = 0;
};

struct Params {
  int64_t B = 0, Hq = 0, Hkv = 0, Lq = 0, Lk = 0, D = 0;
  DType dtype = DType::f32;  // of q, k, v and out
  const void* q = nullptr;
  int64_t qsb = 0, qsh = 0, qsl = 0;
  KvSource k, v;
  void* out = nullptr;
  int64_t osb = 0, osh = 0, osl = 0;
  float* lse = nullptr;  // [B, Hq, Lq] natural-log sum of exp of the scores, or null
  float scale = 1;
  bool causal = false;
  // Valid keys per batch entry (nullptr: all Lk). Causal masking aligns the
  // last query with the last valid key of its batch entry.
  const int64_t* key_lens = nullptr;
  Broadcast4 bias, mask;
  // Tiling (multiples of 16 and 8); the split of Lk for decode.
  int64_t q_block = 64, kv_block = 256, kv_splits = 1;
};

inline constexpr int64_t kMaxSplits = 64;
inline constexpr int64_t kMaxLanes = 16;

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Rows (query head, position) one task owns, and how the rows of a KV head
// are cut into tasks.
struct RowPlan {
  int64_t G = 1;               // query heads per KV head
  int64_t heads_per_task = 1;  // > 1 only when Lq < q_block
  int64_t q_tiles = 1;         // position tiles per head
  int64_t tasks_per_kvhead = 1;
};
// Called by the kernel files too: see core/isa_namespace.h.
inline namespace OPSNN_ISA_NAMESPACE {
inline RowPlan row_plan(const Params& p) {
  RowPlan r;
  r.G = p.Hq / p.Hkv;
  if (p.Lq >= p.q_block) {
    r.heads_per_task = 1;
    r.q_tiles = (p.Lq + p.q_block - 1) / p.q_block;
    r.tasks_per_kvhead = r.G * r.q_tiles;
  } else {
    r.heads_per_task =
        p.Lq > 0 ? std::max<int64_t>(1, std::min<int64_t>(r.G, p.q_block / p.Lq)) : 1;
    r.q_tiles = 1;
    r.tasks_per_kvhead = (r.G + r.heads_per_task - 1) / r.heads_per_task;
  }
  return r;
}
}  // namespace OPSNN_ISA_NAMESPACE

// Floats of per-thread scratch.
inline size_t slot_floats(const Params& p) {
  const int64_t mq = round_up(p.q_block, kMaxLanes), nk = round_up(p.kv_block, 8);
  const int64_t dp = round_up(p.D, 8);
  // The few-rows (decode) path: Q and O [16][D rounded to 16], scores
  // [16][128], row data, 4 x 128 row pointers, bf16 P [16][128] and a zero
  // bf16 row of D rounded to 32 (128 = the largest few-rows key block).
  const int64_t few = 2 * 16 * round_up(p.D, 16) + 16 * 128 + 12 * 16 + 8 * 128 + 16 * 128 / 2 +
                      round_up(p.D, 32) / 2 + 64;
  return static_cast<size_t>(std::max(2 * dp * mq + 2 * nk * mq + 2 * nk * dp + 8 * mq + 64, few));
}
// Floats of the decode partials (m, l, O^T per row and split).
inline size_t partial_floats(const Params& p) {
  if (p.kv_splits <= 1) return 0;
  const RowPlan r = row_plan(p);
  const int64_t mq = round_up(p.q_block, kMaxLanes);
  return static_cast<size_t>(p.B * p.Hkv * r.tasks_per_kvhead * p.kv_splits * mq * (p.D + 2));
}
inline size_t workspace_bytes(const Params& p, int slots) {
  return (static_cast<size_t>(slots) * round_up(static_cast<int64_t>(slot_floats(p)), 16) +
          partial_floats(p)) *
             sizeof(float) +
         64;
}

// Runs attention with `slots` scratch areas in `workspace` (64-byte aligned).
using RunFn = void (*)(const Params& p, void* workspace, int slots);
RunFn run_scalar();
RunFn run_avx2();
RunFn run_avx512();
RunFn run_avx512bf16();  // bf16 inputs, even D, needs has_avx512_bf16()
RunFn run_for(Isa isa);
// Sets q_block / kv_block (0: from the cache sizes) and kv_splits; needs the dims set.
void choose_tiles(Params& p, int64_t q_block, int64_t kv_block);
// Scratch areas to reserve: enough for any thread count the pool may use.
int default_slots();

}  // namespace opsnn::sdpa

// KV cache for attention decode: pre-allocated, appended in place, read by
// the fused attention kernel directly (the cached prefix is never copied).
//
//   KvCacheConfig cfg{.batch = 2, .kv_heads = 8, .head_dim = 128, .capacity = 4096,
//                     .dtype = DType::bf16, .block_size = 64};   // block_size 0: contiguous
//   KvCache cache(cfg);
//   cache.append(seq, k_new, v_new);          // [kv_heads, n, head_dim], any strides
//   cache.attend(q, out, workspace);           // q/out [B, Hq, Lq, head_dim], causal by default
//
// Contiguous mode: one [batch, kv_heads, capacity, head_dim] buffer each for K
// and V. Paged mode: a pool of fixed-size blocks [num_blocks, kv_heads,
// block_size, head_dim] and a block table per sequence; blocks are taken from
// a free list on append and returned by reset(seq).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "opsnn/tensor.h"

namespace opsnn {

struct KvCacheConfig {
  int64_t batch = 1;  // sequences
  int64_t kv_heads = 1;
  int64_t head_dim = 64;
  int64_t capacity = 0;      // max positions per sequence
  DType dtype = DType::f32;  // f32, bf16 or f16
  int64_t block_size = 0;    // 0: contiguous; > 0: paged with blocks of this many positions
  int64_t num_blocks = 0;    // paged: blocks in the pool (0: enough for every sequence at capacity)
};

struct CachedAttentionOptions {
  double scale = 0;    // 0: 1/sqrt(head_dim)
  bool causal = true;  // query i of a sequence of length n sees keys j <= n - Lq + i
};

class KvCache {
 public:
  explicit KvCache(const KvCacheConfig& config);
  ~KvCache();
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  const KvCacheConfig& config() const { return cfg_; }
  bool paged() const { return cfg_.block_size > 0; }
  int64_t length(int64_t seq) const;
  const std::vector<int64_t>& lengths() const { return lens_; }

  // Appends n positions to sequence `seq`: k, v of shape [kv_heads, n, head_dim]
  // (any strides and float dtype; converted to the cache dtype). Throws when
  // the sequence would exceed its capacity or the block pool is exhausted.
  void append(int64_t seq, const Tensor& k, const Tensor& v);
  // Appends n positions to every sequence: k, v of shape [batch, kv_heads, n, head_dim].
  void append(const Tensor& k, const Tensor& v);
  // Forgets sequence `seq` (length 0; its blocks return to the pool).
  void reset(int64_t seq);

  // Attention of q [batch, Hq, Lq, head_dim] (Hq a multiple of kv_heads, q's
  // dtype = the cache dtype) against each sequence's cached keys/values,
  // into out (same shape and dtype as q, contiguous). Key lengths are the
  // sequences' lengths; a sequence of length 0 gives zeros. `workspace` must
  // hold attend_workspace_bytes(q.shape()) bytes, 64-byte aligned.
  size_t attend_workspace_bytes(const Shape& q_shape, const CachedAttentionOptions& opt = {}) const;
  void attend(const Tensor& q, Tensor& out, void* workspace,
              const CachedAttentionOptions& opt = {}) const;
  // Convenience: allocates the output and workspace.
  Tensor attend(const Tensor& q, const CachedAttentionOptions& opt = {}) const;

  // Position `pos` of sequence `seq`, KV head h: pointer to head_dim elements.
  const void* key_row(int64_t seq, int64_t h, int64_t pos) const;
  const void* value_row(int64_t seq, int64_t h, int64_t pos) const;
  const std::vector<int32_t>& block_table() const { return table_; }  // [batch, max_blocks_per_seq]

 private:
  int64_t row_offset(int64_t seq, int64_t h, int64_t pos) const;  // in elements
  KvCacheConfig cfg_;
  std::vector<int64_t> lens_;
  std::vector<int32_t> table_, free_;
  int64_t max_blocks_ = 0;
  Tensor k_, v_;
};

}  // namespace opsnn

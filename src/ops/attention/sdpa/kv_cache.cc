// KvCache: contiguous and paged storage, append in place, and attention that
// reads the cache through the fused kernel's KvSource (no prefix copy).
#include "opsnn/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/gemm/gemm.h"
#include "ops/attention/sdpa/sdpa.h"
#include "opsnn/cpu.h"
#include "opsnn/error.h"
#include "opsnn/memory.h"

namespace opsnn {
namespace {
constexpr const char* kOp = "kv_cache";
std::string str(int64_t v) { return std::to_string(v); }
}  // namespace

KvCache::KvCache(const KvCacheConfig& c) : cfg_(c) {
  if (c.batch < 1) throw Error(kOp, "batch", ">= 1", str(c.batch));
  if (c.kv_heads < 1) throw Error(kOp, "kv_heads", ">= 1", str(c.kv_heads));
  if (c.head_dim < 1 || c.head_dim > 1024)
    throw Error(kOp, "head_dim", "in [1, 1024]", str(c.head_dim));
  if (c.capacity < 1) throw Error(kOp, "capacity", ">= 1", str(c.capacity));
  if (!is_float(c.dtype)) throw Error(kOp, "dtype", "f32, bf16 or f16", dtype_name(c.dtype));
  if (c.block_size < 0) throw Error(kOp, "block_size", ">= 0 (0: contiguous)", str(c.block_size));
  lens_.assign(static_cast<size_t>(c.batch), 0);
  if (paged()) {
    max_blocks_ = (c.capacity + c.block_size - 1) / c.block_size;
    if (cfg_.num_blocks == 0) cfg_.num_blocks = c.batch * max_blocks_;
    if (cfg_.num_blocks < 1 || cfg_.num_blocks > INT32_MAX)
      throw Error(kOp, "num_blocks", "in [1, 2^31)", str(cfg_.num_blocks));
    table_.assign(static_cast<size_t>(c.batch * max_blocks_), -1);
    for (int64_t b = cfg_.num_blocks - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
    k_ = Tensor::zeros({cfg_.num_blocks, c.kv_heads, c.block_size, c.head_dim}, c.dtype);
  } else {
    k_ = Tensor::zeros({c.batch, c.kv_heads, c.capacity, c.head_dim}, c.dtype);
  }
  v_ = Tensor::zeros(k_.shape(), c.dtype);
}

KvCache::~KvCache() = default;

int64_t KvCache::length(int64_t seq) const {
  if (seq < 0 || seq >= cfg_.batch)
    throw Error(kOp, "seq", "in [0, " + str(cfg_.batch) + ")", str(seq));
  return lens_[static_cast<size_t>(seq)];
}

int64_t KvCache::row_offset(int64_t seq, int64_t h, int64_t pos) const {
  const int64_t D = cfg_.head_dim;
  if (!paged()) return ((seq * cfg_.kv_heads + h) * cfg_.capacity + pos) * D;
  const int64_t blk = table_[static_cast<size_t>(seq * max_blocks_ + pos / cfg_.block_size)];
  return ((blk * cfg_.kv_heads + h) * cfg_.block_size + pos % cfg_.block_size) * D;
}

const void* KvCache::key_row(int64_t seq, int64_t h, int64_t pos) const {
  if (pos < 0 || pos >= length(seq) || h < 0 || h >= cfg_.kv_heads)
    throw Error(kOp, "pos/head", "inside the cache", str(pos));
  return static_cast<const char*>(k_.data()) +
         row_offset(seq, h, pos) * static_cast<int64_t>(dtype_size(cfg_.dtype));
}
const void* KvCache::value_row(int64_t seq, int64_t h, int64_t pos) const {
  if (pos < 0 || pos >= length(seq) || h < 0 || h >= cfg_.kv_heads)
    throw Error(kOp, "pos/head", "inside the cache", str(pos));
  return static_cast<const char*>(v_.data()) +
         row_offset(seq, h, pos) * static_cast<int64_t>(dtype_size(cfg_.dtype));
}

void KvCache::append(int64_t seq, const Tensor& k, const Tensor& v) {
  const int64_t len = length(seq);
  const Shape want = {cfg_.kv_heads, k.rank() == 3 ? k.dim(1) : -1, cfg_.head_dim};
  if (k.rank() != 3 || k.shape() != want)
    throw Error(kOp, "k", "[kv_heads, n, head_dim] = " + shape_str(want), k.desc().str());
  if (v.shape() != k.shape())
    throw Error(kOp, "v", "the shape of k " + shape_str(k.shape()), v.desc().str());
  if (!is_float(k.dtype()) || !is_float(v.dtype()))
    throw Error(kOp, "k/v", "float dtypes", k.desc().str());
  const int64_t n = k.dim(1);
  if (len + n > cfg_.capacity)
    throw Error(kOp, "append",
                "at most " + str(cfg_.capacity - len) + " more positions for sequence " + str(seq),
                str(n));
  if (paged()) {
    const int64_t have = (len + cfg_.block_size - 1) / cfg_.block_size;
    const int64_t need = (len + n + cfg_.block_size - 1) / cfg_.block_size;
    if (need - have > static_cast<int64_t>(free_.size()))
      throw Error(kOp, "append", str(need - have) + " free blocks",
                  str(static_cast<int64_t>(free_.size())));
    for (int64_t b = have; b < need; ++b) {
      table_[static_cast<size_t>(seq * max_blocks_ + b)] = free_.back();
      free_.pop_back();
    }
  }
  const size_t es = dtype_size(cfg_.dtype);
  for (int64_t h = 0; h < cfg_.kv_heads; ++h) {
    int64_t t = 0;
    while (t < n) {
      const int64_t pos = len + t;
      const int64_t run =
          paged() ? std::min(n - t, cfg_.block_size - pos % cfg_.block_size) : n - t;
      const int64_t off = row_offset(seq, h, pos) * static_cast<int64_t>(es);
      Tensor kd =
          Tensor::wrap(static_cast<char*>(k_.data()) + off, {run, cfg_.head_dim}, cfg_.dtype);
      Tensor vd =
          Tensor::wrap(static_cast<char*>(v_.data()) + off, {run, cfg_.head_dim}, cfg_.dtype);
      copy_into(k.slice(0, h, h + 1).slice(1, t, t + run).reshape({run, cfg_.head_dim}), kd);
      copy_into(v.slice(0, h, h + 1).slice(1, t, t + run).reshape({run, cfg_.head_dim}), vd);
      t += run;
    }
  }
  lens_[static_cast<size_t>(seq)] = len + n;
}

void KvCache::append(const Tensor& k, const Tensor& v) {
  if (k.rank() != 4 || k.dim(0) != cfg_.batch)
    throw Error(kOp, "k", "[batch=" + str(cfg_.batch) + ", kv_heads, n, head_dim]", k.desc().str());
  if (v.shape() != k.shape())
    throw Error(kOp, "v", "the shape of k " + shape_str(k.shape()), v.desc().str());
  for (int64_t b = 0; b < cfg_.batch; ++b)
    if (lens_[static_cast<size_t>(b)] + k.dim(2) > cfg_.capacity)
      throw Error(kOp, "append", "room for " + str(k.dim(2)) + " positions in sequence " + str(b),
                  "full");
  for (int64_t b = 0; b < cfg_.batch; ++b) {
    const Tensor kb = k.slice(0, b, b + 1), vb = v.slice(0, b, b + 1);
    const Shape s3 = {k.dim(1), k.dim(2), k.dim(3)};
    // A [1, H, n, D] slice viewed as [H, n, D] through its strides.
    const Strides ks = {kb.strides()[1], kb.strides()[2], kb.strides()[3]};
    const Strides vs = {vb.strides()[1], vb.strides()[2], vb.strides()[3]};
    append(b, Tensor::wrap(const_cast<void*>(kb.data()), s3, k.dtype(), ks),
           Tensor::wrap(const_cast<void*>(vb.data()), s3, v.dtype(), vs));
  }
}

void KvCache::reset(int64_t seq) {
  (void)length(seq);
  if (paged())
    for (int64_t b = max_blocks_ - 1; b >= 0; --b) {
      int32_t& e = table_[static_cast<size_t>(seq * max_blocks_ + b)];
      if (e >= 0) free_.push_back(e);
      e = -1;
    }
  lens_[static_cast<size_t>(seq)] = 0;
}

namespace {
sdpa::Params cache_params(const KvCacheConfig& c, const Shape& qs, int64_t lk,
                          const CachedAttentionOptions& opt) {
  if (qs.size() != 4 || qs[0] != c.batch || qs[3] != c.head_dim || qs[1] < 1 ||
      qs[1] % c.kv_heads != 0)
    throw Error(kOp, "q",
                "[batch=" + str(c.batch) + ", Hq (multiple of " + str(c.kv_heads) +
                    "), Lq, head_dim=" + str(c.head_dim) + "]",
                shape_str(qs));
  if (!std::isfinite(opt.scale) || opt.scale < 0)
    throw Error(kOp, "scale", "finite, >= 0", std::to_string(opt.scale));
  sdpa::Params p;
  p.B = c.batch;
  p.Hq = qs[1];
  p.Hkv = c.kv_heads;
  p.Lq = qs[2];
  p.Lk = lk;
  p.D = c.head_dim;
  p.dtype = c.dtype;
  p.scale = static_cast<float>(opt.scale == 0 ? 1.0 / std::sqrt(static_cast<double>(c.head_dim))
                                              : opt.scale);
  p.causal = opt.causal;
  sdpa::choose_tiles(p, 0, 0);
  return p;
}
}  // namespace

size_t KvCache::attend_workspace_bytes(const Shape& q_shape,
                                       const CachedAttentionOptions& opt) const {
  // Planned for a full cache: the key splits only grow with the length.
  return sdpa::workspace_bytes(cache_params(cfg_, q_shape, cfg_.capacity, opt),
                               sdpa::default_slots());
}

void KvCache::attend(const Tensor& q, Tensor& out, void* workspace,
                     const CachedAttentionOptions& opt) const {
  if (q.dtype() != cfg_.dtype)
    throw Error(kOp, "q", std::string("dtype ") + dtype_name(cfg_.dtype), q.desc().str());
  if (q.rank() == 4 && q.strides()[3] != 1)
    throw Error(kOp, "q", "unit stride along head_dim", q.desc().str());
  if (out.dtype() != q.dtype() || out.shape() != q.shape() || !out.is_contiguous())
    throw Error(kOp, "out", "contiguous " + q.desc().str(), out.desc().str());
  if (!workspace)
    throw Error(kOp, "workspace", std::to_string(attend_workspace_bytes(q.shape(), opt)) + " bytes",
                "nullptr");
  const int64_t max_len = std::max<int64_t>(1, *std::max_element(lens_.begin(), lens_.end()));
  sdpa::Params p = cache_params(cfg_, q.shape(), max_len, opt);
  const Strides& qs = q.strides();
  p.q = q.data();
  p.qsb = qs[0], p.qsh = qs[1], p.qsl = qs[2];
  p.out = out.data();
  const Strides& os = out.strides();
  p.osb = os[0], p.osh = os[1], p.osl = os[2];
  p.key_lens = lens_.data();
  const int64_t D = cfg_.head_dim;
  for (sdpa::KvSource* s : {&p.k, &p.v}) {
    s->data = s == &p.k ? k_.data() : v_.data();
    s->sl = D;
    if (paged()) {
      s->sh = cfg_.block_size * D;
      s->block_table = table_.data();
      s->bt_stride = max_blocks_;
      s->block_size = cfg_.block_size;
      s->s_block = cfg_.kv_heads * cfg_.block_size * D;
    } else {
      s->sh = cfg_.capacity * D;
      s->sb = cfg_.kv_heads * cfg_.capacity * D;
    }
  }
  // The vdpbf16ps kernel where it outruns the FMAs, as for the sdpa op.
  const bool dot16 = cfg_.dtype == DType::bf16 && D % 2 == 0 && gemm::use_bf16_dot();
  (dot16 ? sdpa::run_avx512bf16() : sdpa::run_for(active_isa()))(p, workspace,
                                                                 sdpa::default_slots());
}

Tensor KvCache::attend(const Tensor& q, const CachedAttentionOptions& opt) const {
  Tensor out = Tensor::empty(q.shape(), q.dtype());
  const size_t ws = attend_workspace_bytes(q.shape(), opt);
  std::unique_ptr<void, void (*)(void*)> w(aligned_alloc_bytes(ws), aligned_free);
  attend(q, out, w.get(), opt);
  return out;
}

}  // namespace opsnn

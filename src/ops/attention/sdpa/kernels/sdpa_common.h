// Shared pieces of the sdpa kernels: element access per dtype, row and
// column copies, mask look-ups and the decoding of a task index. Part of
// sdpa_impl.h (included inside an ISA namespace).

#pragma once

namespace sdpa_impl {

using opsnn::sdpa::Params;
using opsnn::sdpa::round_up;
using opsnn::sdpa::RowPlan;

// Keys per register tile of the score kernel (rows of S^T); vectors of rows.
inline constexpr int kRJ = kLanes == 8 ? 4 : 8;
inline constexpr int kRD = kLanes == 8 ? 4 : 8;
// Row vectors of the next QK / PV register tile, `left` row vectors to go:
// 3 where the rest splits into 3s and 2s, else 2, and 1 for a last single
// vector. AVX2 4 x 3 tiles use 12 of its 16 registers (4 x 2 left half of
// them idle); AVX-512 8 x 3 use 24 of 32, and GPT-2's 48-row tiles (three
// vectors) ran as 2 + 1 before. A lone 1-vector tile costs more than the 3
// saves: LLaMA's 32-row tiles run 2 + 2, not 3 + 1.
inline int tile_vectors(int64_t left) {
  if (kLanes > 1 && (left == 3 || left >= 5)) return 3;
  return left >= 2 ? 2 : 1;
}
inline constexpr float kNegInf = -__builtin_inff();

// log-sum-exp of a row from its running max and sum: -inf when every key is
// masked (l = 0), NaN when a NaN score reached the sum.
inline float lse_of(float m, float l) {
  return l > 0 ? m + std::log(l) : l == 0 ? kNegInf : __builtin_nanf("");
}

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

// dst[d * stride] = scale * src[off + d] (a row of Q into a column of Q^T).
template <class T>
inline void gather_col_t(const T* src, float* dst, int64_t stride, int64_t n, float scale) {
  for (int64_t d = 0; d < n; ++d) dst[d * stride] = to_f32(src[d]) * scale;
}
inline void gather_col(const void* base, DType t, int64_t off, float* dst, int64_t stride,
                       int64_t n, float scale) {
  switch (t) {
    case DType::bf16:
      return gather_col_t(static_cast<const bf16*>(base) + off, dst, stride, n, scale);
    case DType::f16:
      return gather_col_t(static_cast<const f16*>(base) + off, dst, stride, n, scale);
    default:
      return gather_col_t(static_cast<const float*>(base) + off, dst, stride, n, scale);
  }
}
// dst[off + d] = mul * src[d * stride] (a column of O^T into a row of the output).
// A row whose every key is masked is written as zeros (its P.V sum can hold
// 0 x NaN from masked keys' values, which never take part).
inline void put_zeros(void* base, DType t, int64_t off, int64_t n) {
  std::memset(static_cast<char*>(base) + off * static_cast<int64_t>(dtype_size(t)), 0,
              static_cast<size_t>(n) * dtype_size(t));
}

inline void scatter_col(const float* src, int64_t stride, void* base, DType t, int64_t off,
                        int64_t n, float mul) {
  switch (t) {
    case DType::bf16: {
      bf16* d = static_cast<bf16*>(base) + off;
      for (int64_t x = 0; x < n; ++x) d[x] = opsnn::to_bf16(src[x * stride] * mul);
      return;
    }
    case DType::f16: {
      f16* d = static_cast<f16*>(base) + off;
      for (int64_t x = 0; x < n; ++x) d[x] = opsnn::to_f16(src[x * stride] * mul);
      return;
    }
    default: {
      float* d = static_cast<float*>(base) + off;
      for (int64_t x = 0; x < n; ++x) d[x] = src[x * stride] * mul;
    }
  }
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

// Whether mask row m[j * sj], j < nk, lets any key through (eight bytes at a
// time when contiguous).
inline bool mask_any(const bool* m, int64_t sj, int64_t nk) {
  if (sj == 0) return m[0];
  int64_t j = 0;
  if (sj == 1)
    for (; j + 8 <= nk; j += 8) {
      uint64_t w;
      std::memcpy(&w, m + j, 8);
      if (w) return true;
    }
  for (; j < nk; ++j)
    if (m[j * sj]) return true;
  return false;
}

// Whether the boolean mask lets any of the task's rows see keys j0..j0+nk.
inline bool any_visible(const Params& p, const int64_t* moff, int64_t rows, int64_t j0,
                        int64_t nk) {
  const bool* mk = static_cast<const bool*>(p.mask.data);
  for (int64_t r = 0; r < rows; ++r)
    if (mask_any(mk + moff[r] + j0 * p.mask.sj, p.mask.sj, nk)) return true;
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

}  // namespace sdpa_impl

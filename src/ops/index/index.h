// Kernel interface of the index ops (topk, cumsum, rope, sample): one
// function table per ISA, written once in kernels/index_impl.h.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "opsnn/cpu.h"
#include "opsnn/dtype.h"

namespace opsnn::index {

// Geometry of an op along one axis: [outer, n, inner], contiguous.
struct AxisShape {
  int64_t outer = 1, n = 1, inner = 1;
};

struct RopeParams {
  int64_t B = 0, L = 0, H = 0, D = 0, R = 0;  // R: rotary dim (even, <= D)
  bool bhld = false;                          // layout [B, H, L, D] (else [B, L, H, D])
  bool interleaved = false;                   // GPT-J pairs (2i, 2i+1); else (i, i + R/2)
  const int64_t* rows = nullptr;              // [B * L] table row per (b, l); nullptr: row = l
};

struct SampleParams {
  int64_t k = 0;             // 0: no top-k filter
  double p = 1.0;            // 1: no top-p filter
  double temperature = 1.0;  // 0: greedy
  uint64_t seed = 0;
};

struct Kernels {
  void (*cumsum)(DType t, const void* x, void* y, AxisShape s, bool exclusive, bool reverse);
  void (*rope)(DType t, const void* x, const void* cos, const void* sin, void* y,
               const RopeParams& p);
  // topk and sample use the workspace `ws` (topk_workspace / sample_workspace bytes).
  void (*topk)(DType t, const void* x, void* values, int64_t* indices, AxisShape s, int64_t k,
               bool largest, bool sorted, void* ws);
  void (*sample)(DType t, const void* logits, int64_t* out, int64_t B, int64_t V,
                 const SampleParams& p, void* ws);
};

// Workspace of topk and sample, reported when the op is created: one scratch
// slot per task, `work_slots(rows)` tasks (at most one per core; the rows are
// split over them, and a row's result never depends on the split). A topk slot
// holds the row in f32, the k outputs and n candidates; a sample slot the row,
// V candidates and three arrays of V 8-byte values.
struct Cand {
  float v;
  int64_t i;
};
inline size_t ws_round(size_t b) { return (b + 63) / 64 * 64; }
inline int64_t work_slots(int64_t rows) {
  return std::max<int64_t>(1, std::min<int64_t>(rows, cpu_info().logical_cores));
}
inline size_t topk_slot_bytes(int64_t n, int64_t k) {
  const size_t un = static_cast<size_t>(n), uk = static_cast<size_t>(k);
  return ws_round(un * sizeof(float)) + ws_round(uk * sizeof(float)) + ws_round(un * sizeof(Cand));
}
inline size_t sample_slot_bytes(int64_t V) {
  const size_t u = static_cast<size_t>(V);
  return ws_round(u * sizeof(float)) + ws_round(u * sizeof(Cand)) + 3 * ws_round(u * 8);
}
inline size_t topk_workspace(AxisShape s, int64_t k) {
  return static_cast<size_t>(work_slots(s.outer * s.inner)) * topk_slot_bytes(s.n, k);
}
inline size_t sample_workspace(int64_t B, int64_t V) {
  return static_cast<size_t>(work_slots(B)) * sample_slot_bytes(V);
}

Kernels kernels_scalar();
Kernels kernels_avx2();
Kernels kernels_avx512();

}  // namespace opsnn::index

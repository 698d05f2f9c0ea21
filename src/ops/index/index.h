// Kernel interface of the index ops (topk, cumsum, rope, sample): one
// function table per ISA, written once in kernels/index_impl.h.
#pragma once

#include <cstdint>

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
  void (*topk)(DType t, const void* x, void* values, int64_t* indices, AxisShape s, int64_t k,
               bool largest, bool sorted);
  void (*sample)(DType t, const void* logits, int64_t* out, int64_t B, int64_t V,
                 const SampleParams& p);
};

Kernels kernels_scalar();
Kernels kernels_avx2();
Kernels kernels_avx512();

}  // namespace opsnn::index

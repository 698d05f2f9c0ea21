// Helpers shared by the shape and index ops: row-major index walking for the
// float64 references, and attribute parsing shared by inference and kernels.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ops/common/rank_array.h"
#include "opsnn/op.h"

namespace opsnn::shape {

// Advances a row-major multi-index over `shape`; false after the last one.
inline bool next_index(std::vector<int64_t>& idx, const Shape& shape) {
  for (size_t k = shape.size(); k-- > 0;) {
    if (++idx[k] < shape[k]) return true;
    idx[k] = 0;
  }
  return false;
}
inline int64_t flat_index(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t f = 0;
  for (size_t k = 0; k < shape.size(); ++k) f = f * shape[k] + idx[k];
  return f;
}
// Calls fn(idx, flat) for every element of `shape` in row-major order.
template <class F>
void for_each_index(const Shape& shape, F&& fn) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t flat = 0;
  do fn(idx, flat++);
  while (next_index(idx, shape));
}

// prod(shape[b:e])
inline int64_t prod(const Shape& s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t k = b; k < e && k < s.size(); ++k) p *= s[k];
  return p;
}

// Normalised slice of one axis: output index i reads input start + i * step.
struct SliceDim {
  int64_t start = 0, step = 1, len = 0;
};
// Per-axis slice parameters of a `slice` call (all axes, untouched ones full).
std::vector<SliceDim> slice_params(const OpCall& call);
// The same into stack scratch, for run (rank <= ops::kMaxRank).
void slice_params(const OpCall& call, ops::RankArray<SliceDim>& p);

// Writes `v` into one element of dtype t with the library's conversion rules
// (floats round to nearest even, integers truncate toward zero and saturate,
// NaN -> 0, bool = v != 0).
void encode_value(DType t, double v, void* out);

}  // namespace opsnn::shape

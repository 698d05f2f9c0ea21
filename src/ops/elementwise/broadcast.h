// NumPy broadcasting of up to three contiguous inputs onto one output, as a
// plan built in phase one: output dims collapsed (size-1 dims dropped,
// neighbours merged when every input steps through them contiguously or
// broadcasts both), with per-input element strides (0 = broadcast). After
// collapsing, the innermost stride of every input is 0 or 1.
#pragma once

#include <cstdint>
#include <vector>

#include "core/isa_namespace.h"
#include "opsnn/error.h"
#include "opsnn/tensor.h"

namespace opsnn::ops {

struct BroadcastPlan {
  std::vector<int64_t> dims;                  // collapsed output dims, rank >= 1
  std::vector<std::vector<int64_t>> strides;  // per input, per collapsed dim
  int64_t numel = 0;
  int64_t inner() const { return dims.back(); }
  int64_t rows() const { return dims.back() > 0 ? numel / dims.back() : 0; }
};

// Output ranks above this are rejected (NumPy 2 has the same limit); it keeps
// the row walker's odometer on the stack.
constexpr size_t kMaxBroadcastRank = 64;

inline BroadcastPlan make_broadcast_plan(const Shape& out, const std::vector<Shape>& ins) {
  const size_t r = out.size(), nin = ins.size();
  if (r > kMaxBroadcastRank)
    fail("broadcast", "output rank", "at most " + std::to_string(kMaxBroadcastRank),
         std::to_string(r));
  std::vector<std::vector<int64_t>> st(nin, std::vector<int64_t>(r, 0));
  for (size_t i = 0; i < nin; ++i) {
    const Shape& s = ins[i];
    int64_t stride = 1;
    for (size_t k = s.size(); k-- > 0;) {
      const size_t ok = k + (r - s.size());
      st[i][ok] = s[k] == 1 ? 0 : stride;
      stride *= s[k];
    }
  }
  BroadcastPlan p;
  p.strides.assign(nin, {});
  p.numel = 1;
  for (int64_t d : out) p.numel *= d;
  for (size_t k = 0; k < r; ++k) {
    if (out[k] == 1) continue;
    bool merge = !p.dims.empty();
    for (size_t i = 0; i < nin && merge; ++i) merge = p.strides[i].back() == st[i][k] * out[k];
    if (merge) {
      p.dims.back() *= out[k];
      for (size_t i = 0; i < nin; ++i) p.strides[i].back() = st[i][k];
    } else {
      p.dims.push_back(out[k]);
      for (size_t i = 0; i < nin; ++i) p.strides[i].push_back(st[i][k]);
    }
  }
  if (p.dims.empty()) {  // every dim is 1 (or rank 0): one element
    p.dims.push_back(1);
    for (size_t i = 0; i < nin; ++i) p.strides[i].push_back(0);
  }
  return p;
}

// Offsets of each input at the start of every row (all dims but the inner
// one), walked as an odometer from any starting row. Kernel files use it: see
// core/isa_namespace.h.
inline namespace OPSNN_ISA_NAMESPACE {
template <int N>
struct RowWalker {
  const BroadcastPlan& p;
  int64_t ix[kMaxBroadcastRank] = {};  // odometer over dims[0 .. rank-2]
  int64_t off[N] = {};
  RowWalker(const BroadcastPlan& plan, int64_t row) : p(plan) {
    const int outer = static_cast<int>(p.dims.size()) - 1;
    for (int k = outer - 1; k >= 0; --k) {
      ix[k] = row % p.dims[static_cast<size_t>(k)];
      row /= p.dims[static_cast<size_t>(k)];
      for (int i = 0; i < N; ++i)
        off[i] += ix[k] * p.strides[static_cast<size_t>(i)][static_cast<size_t>(k)];
    }
  }
  void next() {
    for (int k = static_cast<int>(p.dims.size()) - 2; k >= 0; --k) {
      const size_t uk = static_cast<size_t>(k);
      for (int i = 0; i < N; ++i) off[i] += p.strides[static_cast<size_t>(i)][uk];
      if (++ix[k] < p.dims[uk]) return;
      for (int i = 0; i < N; ++i) off[i] -= p.dims[uk] * p.strides[static_cast<size_t>(i)][uk];
      ix[k] = 0;
    }
  }
};
}  // namespace OPSNN_ISA_NAMESPACE

// Index of output element `o` (row-major over `out`) in an input of shape
// `in` broadcast to `out` (for the float64 references).
inline int64_t broadcast_index(const Shape& out, const Shape& in, int64_t o) {
  int64_t idx = 0, stride = 1;
  const size_t off = out.size() - in.size();
  for (size_t k = out.size(); k-- > 0;) {
    const int64_t c = o % out[k];
    o /= out[k];
    if (k >= off) {
      const int64_t d = in[k - off];
      if (d != 1) idx += c * stride;
      stride *= d;
    }
  }
  return idx;
}

}  // namespace opsnn::ops

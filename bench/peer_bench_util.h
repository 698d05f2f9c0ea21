// Shared by the oneDNN peer benchmarks: deterministic inputs, and the
// contenders of side_by_side.h (our op on fixed tensors and workspace, a
// oneDNN primitive on its memories).
#pragma once

#include <cstddef>
#include <cstdint>
#include <dnnl.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "opsnn/opsnn.h"
#include "side_by_side.h"

namespace opsnn::bench {

// f32 values in [-0.5, 0.5) from a linear congruential sequence.
inline void fill_uniform(Tensor& t, uint32_t seed) {
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
}

// f (f32) converted to t (f itself for f32).
inline Tensor as_dtype(const Tensor& f, DType t) {
  if (t == DType::f32) return f;
  Tensor o = Tensor::empty(f.shape(), t);
  copy_into(f, o);
  return o;
}

// op.run(in, out) in the workspace ws; the tensors are captured by value
// (they share their storage), the op and ws by reference.
inline Contender op_contender(Op& op, std::vector<Tensor> in, std::vector<Tensor> out, Tensor& ws,
                              int gap_ms = 20) {
  return {[&op, &ws, in = std::move(in), out = std::move(out)]() mutable {
            op.run(in, out, {static_cast<std::byte*>(ws.data()), ws.nbytes()});
          },
          gap_ms};
}

// A oneDNN primitive executed and waited for.
inline Contender dnnl_contender(dnnl::primitive& prim, dnnl::stream& strm,
                                std::unordered_map<int, dnnl::memory> args, int gap_ms = 20) {
  return {[&prim, &strm, args = std::move(args)] {
            prim.execute(strm, args);
            strm.wait();
          },
          gap_ms};
}

}  // namespace opsnn::bench

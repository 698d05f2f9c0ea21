// Pre-packed weights for the GEMM engine.
//
//   PackedMatrix w = pack_matrix(weight, /*transposed=*/true);   // once, at load
//   matmul_packed(x, w, y, {.bias = &b, .activation = "gelu"});   // every call
//
// The packed layout is private (panels sized for the microkernel the active
// ISA picks); the hot loop never repacks B. The result is bit-identical to the
// matmul/linear/fused_matmul ops on the same kernel, for any thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "opsnn/tensor.h"

namespace opsnn {

class PackedMatrix {
 public:
  PackedMatrix() = default;
  bool defined() const { return impl_ != nullptr; }
  int64_t k() const;  // rows of the logical B [K, N]
  int64_t n() const;  // columns of the logical B
  size_t bytes() const;
  const void* data() const;    // the packed panels, bytes() of them (e.g. to time a read of them)
  std::string kernel() const;  // microkernel it was packed for, e.g. "14x32_avx512"
  bool gated() const;          // packed for the gated (swiglu) epilogue: y has n()/2 columns

  struct Impl;
  const Impl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<const Impl> impl_;
  friend PackedMatrix pack_matrix(const Tensor& b, bool transposed, bool gated);
};

// Packs b as the right operand of a matmul: b is [K, N] (transposed = false)
// or [N, K] (transposed = true: a linear layer's weight). Any float dtype and
// strides; panels keep b's dtype (16-bit weights stay 16-bit, converted to
// f32 in the microkernel).
//
// gated = true packs for the gated epilogue (swiglu = gated + "silu"): B's
// N = 2H columns are gate [0, H) and value [H, 2H) (for a transposed [N, K]
// weight: rows [0, H) gate, [H, 2H) value), and matmul_packed then writes
// y[..., j] = act(alpha*(a @ B)[..., j] + bias[j]) * (alpha*(a @ B)[..., H+j] + bias[H+j])
//             + residual[..., j]
// with y of H columns (bias has 2H entries), from each tile while it is in L1.
PackedMatrix pack_matrix(const Tensor& b, bool transposed = false, bool gated = false);

struct MatmulEpilogue {
  const Tensor* bias = nullptr;      // [N]
  std::string activation = "none";   // none|relu|gelu|gelu_tanh|silu
  float alpha = 1.0f;                // scale of a @ b
  const Tensor* residual = nullptr;  // same shape as y
};

// y = act(alpha * (a @ B) + bias) + residual. a is [..., K] with contiguous
// rows (the leading dims are rows of one GEMM), y is [..., N] contiguous, both
// of the same float dtype. Threaded; no allocation once warm.
void matmul_packed(const Tensor& a, const PackedMatrix& b, Tensor& y,
                   const MatmulEpilogue& ep = {});

}  // namespace opsnn

// Pre-packed int8 weights for W8A8 matmuls (the op `matmul_int8` packs its
// weights on every call; this packs them once, at model load).
//
//   PackedInt8Matrix w = pack_int8_matrix(w_i8);                 // [N, K] int8, once
//   matmul_int8_packed(a_i8, w, y_f32, {.a_scale = &s_tok, .w_scale = &s_ch});
//
// The results are identical to the matmul_int8 op on the same kernel; see
// docs/quantization.md for the arithmetic and the packed layout.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "opsnn/tensor.h"

namespace opsnn {

class PackedInt8Matrix {
 public:
  PackedInt8Matrix() = default;
  bool defined() const { return impl_ != nullptr; }
  int64_t n() const;
  int64_t k() const;
  size_t bytes() const;
  std::string kernel() const;  // e.g. "12x32_avx512vnni"

  struct Impl;
  const Impl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<Impl> impl_;
  friend PackedInt8Matrix pack_int8_matrix(const Tensor& w);
};

// w: int8 [N, K] (a linear layer's weight; any strides), for the kernel the active ISA picks.
PackedInt8Matrix pack_int8_matrix(const Tensor& w);

struct Int8MatmulParams {
  const Tensor* a_scale = nullptr;  // f32 [] / [1] (per tensor) or [M] (per token)
  const Tensor* w_scale = nullptr;  // f32 [] / [1] or [N] (per channel)
  const Tensor* bias = nullptr;     // f32 [N]
  int32_t a_zero_point = 0;
  std::string activation = "none";  // none|relu|gelu|gelu_tanh|silu
  float y_scale = 1.0f;             // y dtype i8/u8
  int32_t y_zero_point = 0;
};

// y = matmul_int8(a, w): a i8/u8 [..., K] contiguous; y contiguous [..., N] of
// dtype i32 (raw), f32/bf16/f16 (dequantized) or i8/u8 (requantized). Threaded;
// the per-thread workspace is kept between calls.
void matmul_int8_packed(const Tensor& a, const PackedInt8Matrix& w, Tensor& y,
                        const Int8MatmulParams& p = {});

}  // namespace opsnn

// Channels first <-> channels last at the convolution kernels' boundary,
// through the shape ops' copy engine (cache-blocked in-register transposes
// per ISA; a plain 32 x 32 loop here ran at ~1.6 GB/s on power-of-two
// planes, whose rows all fall in one L1 set).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/shape/kernels/copy.h"
#include "opsnn/cpu.h"

namespace opsnn::conv {

inline shape::TileKernels layout_tiles(Isa isa) {
  if (isa == Isa::avx512) return shape::tiles_avx512();
  if (isa == Isa::avx2) return shape::tiles_avx2();
  return shape::tiles_scalar();
}

// Per image: [rows][cols] -> [cols][rows], elements of es bytes.
inline void transpose_images(const void* src, void* dst, size_t es, int64_t n, int64_t rows,
                             int64_t cols, const shape::TileKernels& tiles) {
  const int64_t shape[3] = {n, cols, rows};
  const int64_t src_strides[3] = {rows * cols, 1, cols};
  const int64_t dst_strides[3] = {rows * cols, rows, 1};
  shape::strided_copy(es, shape, src, src_strides, dst, dst_strides, tiles);
}

}  // namespace opsnn::conv

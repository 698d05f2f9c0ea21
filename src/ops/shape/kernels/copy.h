// The data-movement engine of the shape ops (reshape, transpose, slice,
// concat, split, pad, expand, gather): copies an n-d strided view into
// another, for any element size. Dims are merged where both sides are
// contiguous, so most copies become memcpy of long runs; a view whose unit
// stride is on a different axis in source and destination is a transpose and
// goes through cache-blocked tiles (in-register transposes per ISA).
// Results never depend on the thread count: every element is a plain copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "opsnn/tensor.h"

namespace opsnn::shape {

// dst[c * dst_ld + r] = src[r * src_ld + c] for r < rows, c < cols (element
// strides). One per element size; nullptr: the portable loop.
using TileFn = void (*)(const void* src, int64_t src_ld, void* dst, int64_t dst_ld, int64_t rows,
                        int64_t cols);
struct TileKernels {
  TileFn tile2 = nullptr;  // 2-byte elements
  TileFn tile4 = nullptr;  // 4-byte elements
  // 4-byte elements written with non-temporal stores (a destination far
  // larger than the caches); nullptr: use tile4.
  TileFn tile4_stream = nullptr;
};
TileKernels tiles_scalar();
TileKernels tiles_avx2();
TileKernels tiles_avx512();

// Copies the view (shape, src_strides) at `src` into (shape, dst_strides) at
// `dst`; strides in elements of `elem_size` bytes, may be 0 (broadcast) or
// negative (reversed). Threaded with parallel_for.
// At most ops::kMaxRank dims (the kernels decline higher ranks at create).
void strided_copy(size_t elem_size, std::span<const int64_t> shape, const void* src,
                  std::span<const int64_t> src_strides, void* dst,
                  std::span<const int64_t> dst_strides, const TileKernels& tiles);

// Fills n elements of `elem_size` bytes at dst with the element at `value`.
void fill(size_t elem_size, void* dst, int64_t n, const void* value);

}  // namespace opsnn::shape

// Shared driver of the in-register transpose tiles: full B x B blocks go to
// the ISA's block function, the ragged edges to a plain loop.
#pragma once

#include <cstdint>

namespace opsnn::shape {

// BR x BC blocks (source rows x source columns); BR * sizeof(T) = 64 makes
// every destination row write one whole cache line.
template <int BR, int BC, class T, class BlockFn>
inline void tile_blocked(const void* src, int64_t sl, void* dst, int64_t dl, int64_t rows,
                         int64_t cols, BlockFn block) {
  const T* s = static_cast<const T*>(src);
  T* d = static_cast<T*>(dst);
  const int64_t rb = rows / BR * BR, cb = cols / BC * BC;
  for (int64_t r = 0; r < rb; r += BR)
    for (int64_t c = 0; c < cb; c += BC) block(s + r * sl + c, sl, d + c * dl + r, dl);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = r < rb ? cb : 0; c < cols; ++c) d[c * dl + r] = s[r * sl + c];
}

}  // namespace opsnn::shape

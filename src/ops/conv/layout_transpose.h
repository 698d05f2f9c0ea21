// Channels first <-> channels last at the convolution kernels' boundary.
#pragma once

#include <algorithm>
#include <cstdint>

#include "opsnn/thread_pool.h"

namespace opsnn::conv {

// Per image: [rows][cols] -> [cols][rows], in 32 x 32 blocks.
template <class T>
void transpose_images(const T* src, T* dst, int64_t n, int64_t rows, int64_t cols) {
  constexpr int64_t B = 32;
  const int64_t rb = (rows + B - 1) / B, cb = (cols + B - 1) / B;
  parallel_for(n * rb * cb, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t img = t / (rb * cb), r0 = t / cb % rb * B, c0 = t % cb * B;
      const T* s = src + img * rows * cols;
      T* d = dst + img * rows * cols;
      for (int64_t r = r0; r < std::min(rows, r0 + B); ++r)
        for (int64_t c = c0; c < std::min(cols, c0 + B); ++c) d[c * rows + r] = s[r * cols + c];
    }
  });
}

}  // namespace opsnn::conv

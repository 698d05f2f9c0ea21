// Pooling kernels (max, average, global, adaptive): the window of every
// output index, per spatial dim, is precomputed at create as a list of valid
// input indices (padding and ceil-mode overhang dropped) plus the divisor
// counts; the kernels walk these lists. Written once in kernels/pool_impl.h,
// instantiated per ISA: channels last vectorises over channels, channels
// first walks each (n, c) plane.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/conv/row_cursor.h"
#include "opsnn/cpu.h"
#include "opsnn/dtype.h"

namespace opsnn::conv {

// One spatial dim: output o reads input indices idx[first[o] .. first[o+1]).
struct PoolDim {
  int64_t in = 1, out = 1;
  std::vector<int64_t> first;  // out + 1 offsets into idx
  std::vector<int64_t> idx;    // valid input indices
  std::vector<int64_t> count;  // divisor per output (count_include_pad / adaptive)
  // The same windows tap-major with a fixed width `win` (tap t of output o at
  // t * out + o), shorter windows padded with the index `in` (a neutral
  // element the kernel places after the row): the channels-first kernels'
  // vector gathers along the row. Empty when it would not fit int32 or the
  // windows are a run (below).
  int64_t win = 0;
  std::vector<int32_t> idx_tm;
  // Windows [start + stride o, start + stride o + taps) clipped to [0, in)
  // for every o, stride 1 or 2 (run_stride 0: not so): the channels-first
  // kernels then read each tap of kLanes outputs as one plain or two
  // deinterleaved vector loads from a row padded with the reduction's
  // identity, no gathers. Set only where the padding fits kRunPad floats on
  // either side of the row.
  int64_t run_stride = 0, run_start = 0, run_taps = 0;
};
inline constexpr int64_t kRunPad = 128;

struct PoolPlan {
  PoolDim dim[3];
  bool cl = false, is_max = false, include_pad = false, indices = false;
  int64_t n = 0, c = 0;
  DType t = DType::f32;
};

// y: [N, C, out...] or [N, out..., C] in t; ind (may be null): i64 flat index
// into each (n, c) input plane (PyTorch's max_pool indices).
using PoolFn = void (*)(const PoolPlan& p, const void* x, void* y, int64_t* ind);
PoolFn pool_fn_scalar();
PoolFn pool_fn_avx2();
PoolFn pool_fn_avx512();

}  // namespace opsnn::conv

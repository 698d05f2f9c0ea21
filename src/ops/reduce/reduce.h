// Reductions (sum, mean, max, min over any axes; argmax over one axis): the
// plan built in phase one and the kernel template instantiated per ISA.
#pragma once

#include <cstdint>
#include <vector>

#include "opsnn/dtype.h"
#include "opsnn/tensor.h"

namespace opsnn::reduce {

enum class Kind : int { sum, mean, max, min, prod, sum_square, l1, l2 };

// The contiguous input with size-1 dims dropped and neighbouring dims of the
// same kind (kept / reduced) merged, then split into
//   outer kept groups  (kdims, kstrides; row-major = output order),
//   outer reduced groups (rdims, rstrides),
//   the last group: `inner` elements, reduced (inner_reduced) or kept.
// Output element (o, j) = reduce over c of x[koff(o) + roff(c) + j] (kept inner)
// or reduce over (c, i) of x[koff(o) + roff(c) + i] (reduced inner).
struct Plan {
  std::vector<int64_t> kdims, kstrides, rdims, rstrides;
  int64_t inner = 1;
  bool inner_reduced = true;
  int64_t kcount = 1, rcount = 1;  // products of kdims / rdims
  int64_t nred = 1;                // elements reduced into each output
  // Fixed blocking of a reduced-inner reduction (depends on the shape only):
  // blocks of whole segments (inner < kBlock) or of kBlock-long pieces of one.
  int64_t nblocks = 0, segs_per_block = 1, subs_per_seg = 1;
  bool split_outputs = false;  // few outputs: blocks of one output run in parallel
  // Kept-inner reductions: chunks of ki_cw (<= kColChunk) kept columns, rows
  // combined in blocks of kRowBlock; with few chunks (ki_split) the row blocks
  // of one chunk run in parallel into the workspace, then combine in order.
  int64_t ki_ncc = 0, ki_nrb = 0, ki_cw = 0;
  bool ki_split = false;
  size_t workspace_bytes() const {
    if (split_outputs) return static_cast<size_t>(kcount * nblocks) * sizeof(float);
    if (ki_split) return static_cast<size_t>(kcount * ki_ncc * ki_nrb * ki_cw) * sizeof(float);
    return 0;
  }
};

inline constexpr int64_t kBlock = 4096;
inline constexpr int64_t kColChunk = 4096;  // a multiple of every lane count
inline constexpr int64_t kRowBlock = 256;
inline constexpr int kMaxGroups = 32;

Plan make_plan(const Shape& shape, const std::vector<int64_t>& axes);

using RunFn = void (*)(Kind kind, DType t, const Plan& plan, const void* x, void* y,
                       float* workspace);
// argmax (argmin when `min`) over the middle axis of x viewed as
// [outer, n, inner] -> int64 [outer, inner].
using ArgmaxFn = void (*)(bool min, DType t, const void* x, int64_t* y, int64_t outer, int64_t n,
                          int64_t inner);

RunFn run_scalar();
RunFn run_avx2();
RunFn run_avx512();
ArgmaxFn argmax_scalar();
ArgmaxFn argmax_avx2();
ArgmaxFn argmax_avx512();

}  // namespace opsnn::reduce

#include "ops/common/cases.h"

namespace opsnn::ops {

std::vector<Shape> elementwise_shapes() {
  return {{0}, {1}, {7}, {15}, {16}, {17}, {33}, {1000}, {3, 5, 7}, {2, 0, 3}, {65537}};
}

TensorDesc transposed_desc(DType t, int64_t rows, int64_t cols) {
  // Logical [rows, cols] over memory laid out as [cols, rows].
  return TensorDesc(t, {rows, cols}, {1, rows});
}

}  // namespace opsnn::ops

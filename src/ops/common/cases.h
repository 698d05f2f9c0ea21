// Shapes shared by the ops' case tables: empty, one, odd, around the vector
// widths (8, 16), non-multiples, large.
#pragma once

#include <vector>

#include "opsnn/op.h"

namespace opsnn::ops {

// 1-D and n-D shapes for element-wise ops.
std::vector<Shape> elementwise_shapes();
// A strided (transposed) view of shape [rows, cols] for the strided case.
TensorDesc transposed_desc(DType t, int64_t rows, int64_t cols);

}  // namespace opsnn::ops

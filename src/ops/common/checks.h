// Validation helpers shared by the ops' shape-inference functions. Each
// throws opsnn::Error naming the op, the argument, expected vs got.
#pragma once

#include <string>
#include <vector>

#include "opsnn/op.h"

namespace opsnn::ops {

inline constexpr DType kFloatTypes[] = {DType::f32, DType::bf16, DType::f16};
inline const std::vector<DType> kFloatDTypes = {DType::f32, DType::bf16, DType::f16};

std::string input_name(const OpCall& call, size_t i);
// Input i must have one of the float dtypes (f32, bf16, f16).
void require_float(const OpCall& call, size_t i);
// Input i must have the same dtype as input `ref`.
void require_same_dtype(const OpCall& call, size_t i, size_t ref);
void require_rank(const OpCall& call, size_t i, int64_t rank);
void require_rank_at_least(const OpCall& call, size_t i, int64_t rank);
void require_shape(const OpCall& call, size_t i, const Shape& shape);
void require_dtype(const OpCall& call, size_t i, std::initializer_list<DType> allowed);
// NumPy broadcasting of two shapes; fails naming both inputs.
Shape broadcast_shapes(const OpCall& call, const Shape& a, const Shape& b);
// Normalised, sorted, de-duplicated axes (empty `axes` = all axes).
std::vector<int64_t> normalize_axes(const OpCall& call, const std::string& arg,
                                    const std::vector<int64_t>& axes, int64_t rank);

}  // namespace opsnn::ops

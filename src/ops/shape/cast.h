// cast: per-ISA conversion functions between the 8 dtypes (contiguous runs).
#pragma once

#include <cstdint>

#include "opsnn/dtype.h"

namespace opsnn::cast {

// Converts n contiguous elements of `from` at src into `to` at dst.
using ConvFn = void (*)(const void* src, void* dst, int64_t n);
using TableFn = ConvFn (*)(DType from, DType to);

ConvFn table_scalar(DType from, DType to);
ConvFn table_avx2(DType from, DType to);
ConvFn table_avx512(DType from, DType to);

}  // namespace opsnn::cast

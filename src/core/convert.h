// Per-ISA tables of the bulk conversion routines behind opsnn/dtype.h, and
// the threaded contiguous conversion built on them.
#pragma once

#include <cstddef>

#include "opsnn/dtype.h"

namespace opsnn::detail {

struct ConvertFns {
  void (*bf16_to_f32)(const bf16*, float*, size_t);
  void (*f32_to_bf16)(const float*, bf16*, size_t);
  void (*f16_to_f32)(const f16*, float*, size_t);
  void (*f32_to_f16)(const float*, f16*, size_t);
};

const ConvertFns& convert_fns_scalar();
const ConvertFns& convert_fns_avx2();
const ConvertFns& convert_fns_avx512();

}  // namespace opsnn::detail

namespace opsnn {

// n contiguous elements from src (dtype st) into dst (dtype dt), each of
// f32, bf16 and f16 (equal dtypes are copied), split over the thread pool in
// chunks of 16K elements. False, with nothing written, for any other pair.
bool convert_contiguous(const void* src, DType st, void* dst, DType dt, size_t n);

}  // namespace opsnn

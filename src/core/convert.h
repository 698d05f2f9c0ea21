// Per-ISA tables of the bulk conversion routines behind opsnn/dtype.h.
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

// The reference kernel every op with a float64 reference gets for free: it
// converts inputs to double, runs the schema's reference and converts back.
// Obviously correct, slow, last in the kernel list.
#pragma once

#include <string>

#include "opsnn/op.h"

namespace opsnn::detail {
KernelDesc reference_kernel_desc(const std::string& op);
}

// Registration entry points of the conv family (conv, conv_transpose, pooling, resize).
#pragma once

#include <string>

#include "opsnn/op.h"

namespace opsnn::conv {
std::string conv_name(int r);  // "conv2d"
void register_conv(Registry& r);
void register_pool(Registry& r);
void register_resize(Registry& r);
void register_conv_transpose(Registry& r);
}  // namespace opsnn::conv

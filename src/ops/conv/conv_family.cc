#include "ops/conv/conv_family.h"

#include "ops/builtin_ops.h"

namespace opsnn {
void register_conv_ops(Registry& r) {
  conv::register_conv(r);
  conv::register_pool(r);
  conv::register_resize(r);
  conv::register_conv_transpose(r);
}
}  // namespace opsnn

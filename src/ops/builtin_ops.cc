#include "ops/builtin_ops.h"

#include "opsnn/op.h"

namespace opsnn {

void register_builtin_ops(Registry& r) {
  register_unary_ops(r);
  register_softmax_ops(r);
  register_norm_ops(r);
}

}  // namespace opsnn

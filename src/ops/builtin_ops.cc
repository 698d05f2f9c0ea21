#include "ops/builtin_ops.h"

#include "opsnn/op.h"

namespace opsnn {

void register_builtin_ops(Registry& r) {
  register_unary_ops(r);
  register_shape_ops(r);
  register_cast_op(r);
  register_index_ops(r);
}

}  // namespace opsnn

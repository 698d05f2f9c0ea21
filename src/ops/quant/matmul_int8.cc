#include "ops/builtin_ops.h"
#include "opsnn/op.h"
namespace opsnn {
void register_matmul_int8_op(Registry&) {}
}  // namespace opsnn

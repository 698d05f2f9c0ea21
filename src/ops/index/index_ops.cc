#include "ops/builtin_ops.h"
#include "opsnn/op.h"
namespace opsnn {
void register_index_ops(Registry&) {}
}

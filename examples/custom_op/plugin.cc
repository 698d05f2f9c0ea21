// The same custom op as a plugin for the `opsnn` tool:
//   opsnn --plugin ./libscaled_swish_plugin.so check --op scaled_swish
#include "opsnn/plugin.h"

#include "scaled_swish.h"

extern "C" void opsnn_register_ops(opsnn::Registry* registry) { register_scaled_swish(*registry); }

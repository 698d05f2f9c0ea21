// Plugins: shared libraries that register custom ops into a running ops-nn
// (the `opsnn` tool's --plugin option and OPSNN_PLUGINS). A plugin links the
// shared libopsnn and exports:
//
//   extern "C" void opsnn_register_ops(opsnn::Registry* registry);
#pragma once

#include <string>

#include "opsnn/op.h"

extern "C" void opsnn_register_ops(opsnn::Registry* registry);

namespace opsnn {

// dlopens `path` and calls its opsnn_register_ops with the global registry;
// throws opsnn::Error if it cannot be loaded or lacks the entry point.
void load_plugin(const std::string& path);
// Loads every path of the colon-separated OPSNN_PLUGINS variable.
void load_plugins_from_env();

}  // namespace opsnn

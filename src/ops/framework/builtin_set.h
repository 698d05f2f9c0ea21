// The op set Registry::global() starts with. Declared here, by the framework,
// and defined by the ops layer (src/ops/builtin_ops.cc): the registry needs no
// op header, and a plain function (not a static initialiser) keeps the ops
// linked in from the static library.
#pragma once

namespace opsnn {
class Registry;
void register_builtin_ops(Registry& r);
}  // namespace opsnn

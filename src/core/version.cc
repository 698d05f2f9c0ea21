#include "opsnn/opsnn.h"

namespace opsnn {
const char* version() { return "0.1.0"; }
}  // namespace opsnn

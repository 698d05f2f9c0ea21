// Logging controlled by OPSNN_LOG_LEVEL=error|warn|info|debug (default warn).
#pragma once

#include <string>

namespace opsnn {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };
LogLevel log_level();
void set_log_level(LogLevel level);
void log(LogLevel level, const std::string& message);
// Logs `message` only the first time `key` is seen in this process.
void log_once(LogLevel level, const std::string& key, const std::string& message);

}  // namespace opsnn

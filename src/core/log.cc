#include "opsnn/log.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

namespace opsnn {
namespace {

LogLevel level_from_env() {
  const char* e = std::getenv("OPSNN_LOG_LEVEL");
  if (!e) return LogLevel::warn;
  std::string s(e);
  if (s == "error") return LogLevel::error;
  if (s == "info") return LogLevel::info;
  if (s == "debug") return LogLevel::debug;
  return LogLevel::warn;
}

LogLevel& current() {
  static LogLevel level = level_from_env();
  return level;
}

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::error:
      return "error";
    case LogLevel::warn:
      return "warn";
    case LogLevel::info:
      return "info";
    case LogLevel::debug:
      return "debug";
  }
  return "?";
}

}  // namespace

LogLevel log_level() { return current(); }
void set_log_level(LogLevel level) { current() = level; }

void log(LogLevel level, const std::string& message) {
  if (level > current()) return;
  std::fprintf(stderr, "[opsnn %s] %s\n", level_name(level), message.c_str());
}

void log_once(LogLevel level, const std::string& key, const std::string& message) {
  if (level > current()) return;
  static std::mutex mu;
  static std::set<std::string> seen;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen.insert(key).second) return;
  }
  log(level, message);
}

}  // namespace opsnn

#include "opsnn/error.h"

namespace opsnn {

Error::Error(std::string op, std::string arg, std::string expected, std::string got)
    : std::runtime_error(op + ": " + arg + ": expected " + expected + ", got " + got),
      op_(std::move(op)),
      arg_(std::move(arg)),
      expected_(std::move(expected)),
      got_(std::move(got)) {}

Error::Error(std::string message) : std::runtime_error(std::move(message)) {}

// Out of line: the vtable, type info and destructor are emitted here only, not
// as inline copies in every file that throws (kernel files are compiled with
// ISA flags; see core/isa_namespace.h).
Error::~Error() = default;

void fail(const std::string& op, const std::string& arg, const std::string& expected,
          const std::string& got) {
  throw Error(op, arg, expected, got);
}

}  // namespace opsnn

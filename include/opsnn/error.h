// The one error type of the library.
#pragma once

#include <stdexcept>
#include <string>

namespace opsnn {

// Every failure is reported as an opsnn::Error whose message names the op (or
// component), the argument, and what was expected versus what was given:
//   "layer_norm: input 'scale': expected shape [768], got [512]"
class Error : public std::runtime_error {
 public:
  Error(std::string op, std::string arg, std::string expected, std::string got);
  explicit Error(std::string message);
  ~Error() override;

  const std::string& op() const { return op_; }
  const std::string& arg() const { return arg_; }
  const std::string& expected() const { return expected_; }
  const std::string& got() const { return got_; }

 private:
  std::string op_, arg_, expected_, got_;
};

// Op::create with a forced kernel that exists but does not take the call (its
// reason is in what()): a case another kernel covers, not a failure of the op.
class KernelDeclined : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void fail(const std::string& op, const std::string& arg, const std::string& expected,
                       const std::string& got);

}  // namespace opsnn

#define OPSNN_CHECK(cond, op, arg, expected, got)               \
  do {                                                          \
    if (!(cond)) ::opsnn::fail((op), (arg), (expected), (got)); \
  } while (0)

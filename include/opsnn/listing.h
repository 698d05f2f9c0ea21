// What `opsnn ops` and the Python package's ops_nn.ops() list: every
// registered op (built-in, plugin or user-registered), its dtypes, arguments,
// attributes, kernels and the kernel dispatch tries first on this machine.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace opsnn {

struct OpListing {
  struct Attr {
    std::string name, type, doc;
  };
  std::string name, family, doc;
  std::vector<std::string> dtypes;
  std::vector<std::string> inputs;  // "name", "name?" (optional), "name..." (variadic)
  std::vector<std::string> outputs;
  std::vector<Attr> attributes;
  std::vector<std::string> kernels;  // best first, reference last
  // Per dtype of `dtypes`: the kernel dispatch would try first (it may still
  // decline particular shapes; OPSNN_LOG_LEVEL=info shows that).
  std::vector<std::pair<std::string, std::string>> dispatch;
};

// Every registered op, sorted by name.
std::vector<OpListing> list_ops();

}  // namespace opsnn

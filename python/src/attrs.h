// Python values <-> opsnn attribute values, by the schema's attribute types.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "opsnn/op.h"

namespace ops_nn {
namespace nb = nanobind;

// Converts `value` for attribute `spec` of `op`; throws opsnn::Error naming
// the op and the attribute when the Python type does not fit.
opsnn::AttrValue attr_from_py(nb::handle value, const opsnn::AttrSpec& spec, const std::string& op);
nb::object attr_to_py(const opsnn::AttrValue& v);
// Appends a byte encoding of `v` to `key` (for the per-op cache).
void append_key(std::string& key, const opsnn::AttrValue& v);

}  // namespace ops_nn

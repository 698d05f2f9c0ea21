#include "opsnn/listing.h"

#include "opsnn/op.h"

namespace opsnn {
namespace {

// The kernel a call with every input in dtype t gets first (where it accepts).
std::string first_kernel(const Registry& reg, const std::string& op, size_t num_inputs, DType t) {
  const std::vector<DType> input_dtypes(num_inputs, t);
  for (const KernelDesc* kp : reg.ranked(op, input_dtypes)) {
    const KernelDesc& k = *kp;
    if (k.isa > active_isa() || (k.cpu_ok && !k.cpu_ok())) continue;
    for (DType d : k.dtypes)
      if (d == t) return k.name;
  }
  return "";
}

}  // namespace

std::vector<OpListing> list_ops() {
  const Registry& reg = Registry::global();
  std::vector<OpListing> all;
  for (const std::string& name : reg.op_names()) {
    const OpSchema& s = reg.schema(name);
    const std::vector<KernelDesc>& kernels = reg.kernels(name);
    OpListing o;
    o.name = name;
    o.family = s.family;
    o.doc = s.doc;
    for (DType t : s.dtypes) {
      o.dtypes.push_back(dtype_name(t));
      o.dispatch.emplace_back(dtype_name(t), first_kernel(reg, name, s.inputs.size(), t));
    }
    for (const ArgSpec& a : s.inputs)
      o.inputs.push_back(a.name + (a.optional ? "?" : "") + (a.variadic ? "..." : ""));
    for (const ArgSpec& a : s.outputs) o.outputs.push_back(a.name);
    for (const AttrSpec& a : s.attrs)
      o.attributes.push_back({a.name, attr_type_name(a.type), a.doc});
    for (const KernelDesc& k : kernels) o.kernels.push_back(k.name);
    all.push_back(std::move(o));
  }
  return all;
}

}  // namespace opsnn

#include "opsnn/listing.h"

#include "opsnn/op.h"

namespace opsnn {
namespace {

std::string first_kernel(const std::vector<KernelDesc>& kernels, DType t) {
  for (const KernelDesc& k : kernels) {
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
      o.dispatch.emplace_back(dtype_name(t), first_kernel(kernels, t));
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

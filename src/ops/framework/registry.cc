#include <algorithm>
#include <climits>
#include <string>

#include "ops/framework/builtin_set.h"
#include "ops/framework/reference_kernel.h"
#include "opsnn/error.h"
#include "opsnn/op.h"

namespace opsnn {

Registry& Registry::global() {
  static Registry* registry = [] {
    auto* r = new Registry();
    register_builtin_ops(*r);
    return r;
  }();
  return *registry;
}

void Registry::add_op(OpSchema schema) {
  if (schema.name.empty()) throw Error("registry", "name", "a non-empty op name", "''");
  if (ops_.count(schema.name))
    throw Error("registry", "name", "a new op name", "'" + schema.name + "' (already registered)");
  if (!schema.infer) throw Error("registry", schema.name, "a shape-inference function", "none");
  const std::string name = schema.name;
  const bool has_ref = static_cast<bool>(schema.reference);
  ops_[name].schema = std::move(schema);
  if (has_ref) add_kernel(name, detail::reference_kernel_desc(name));
}

void Registry::add_kernel(const std::string& op, KernelDesc kernel) {
  auto it = ops_.find(op);
  if (it == ops_.end()) throw Error("registry", "op", "a registered op", "'" + op + "'");
  if (!kernel.create) throw Error("registry", kernel.name, "a kernel factory", "none");
  auto& ks = it->second.kernels;
  // Stable: among equal priorities, the earlier registration comes first.
  auto pos = std::upper_bound(ks.begin(), ks.end(), kernel.priority,
                              [](int p, const KernelDesc& k) { return p > k.priority; });
  ks.insert(pos, std::move(kernel));
}

const OpSchema* Registry::find(const std::string& op) const {
  auto it = ops_.find(op);
  return it == ops_.end() ? nullptr : &it->second.schema;
}

const OpSchema& Registry::schema(const std::string& op) const {
  if (const OpSchema* s = find(op)) return *s;
  throw Error("registry", "op", "a registered op (see `opsnn ops`)", "'" + op + "'");
}

std::vector<std::string> Registry::op_names() const {
  std::vector<std::string> names;
  for (const auto& [k, v] : ops_) names.push_back(k);
  return names;
}

const std::vector<KernelDesc>& Registry::kernels(const std::string& op) const {
  auto it = ops_.find(op);
  if (it == ops_.end()) throw Error("registry", "op", "a registered op", "'" + op + "'");
  return it->second.kernels;
}

std::vector<const KernelDesc*> Registry::ranked(const std::string& op,
                                                std::span<const DType> input_dtypes) const {
  const std::vector<KernelDesc>& ks = kernels(op);
  std::vector<std::pair<int, const KernelDesc*>> order;
  order.reserve(ks.size());
  for (const KernelDesc& k : ks)
    order.emplace_back(k.priority_for ? k.priority_for(input_dtypes) : k.priority, &k);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<const KernelDesc*> out;
  out.reserve(order.size());
  for (const auto& [priority, k] : order) out.push_back(k);
  return out;
}

Tolerance default_tolerance(DType t) {
  switch (t) {
    case DType::f32:
      return {1e-6, 1e-5};
    case DType::f16:
      return {1e-3, 2e-3};
    case DType::bf16:
      return {8e-3, 1.6e-2};
    default:
      return {0, 0};
  }
}

}  // namespace opsnn

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "opsnn/opsnn.h"

namespace opsnn::cli {
namespace {

// The kernel dispatch would try first on this machine for a dtype (the
// kernel may still decline particular shapes; `--log info` shows that).
std::string first_kernel(const std::string& op, DType t) {
  for (const KernelDesc& k : Registry::global().kernels(op)) {
    if (k.isa > active_isa() || (k.cpu_ok && !k.cpu_ok())) continue;
    for (DType d : k.dtypes)
      if (d == t) return k.name;
  }
  return "";
}

void run_ops(bool json) {
  const Registry& reg = Registry::global();
  nlohmann::json arr = nlohmann::json::array();
  for (const std::string& name : reg.op_names()) {
    const OpSchema& s = reg.schema(name);
    nlohmann::json o;
    o["name"] = name;
    o["family"] = s.family;
    o["doc"] = s.doc;
    std::vector<std::string> dts, ins, outs, kernels;
    nlohmann::json picks = nlohmann::json::object();
    for (DType t : s.dtypes) {
      dts.push_back(dtype_name(t));
      picks[dtype_name(t)] = first_kernel(name, t);
    }
    for (const ArgSpec& a : s.inputs)
      ins.push_back(a.name + (a.optional ? "?" : "") + (a.variadic ? "..." : ""));
    for (const ArgSpec& a : s.outputs) outs.push_back(a.name);
    for (const KernelDesc& k : reg.kernels(name)) kernels.push_back(k.name);
    nlohmann::json attrs = nlohmann::json::array();
    for (const AttrSpec& a : s.attrs)
      attrs.push_back({{"name", a.name}, {"type", attr_type_name(a.type)}, {"doc", a.doc}});
    o["dtypes"] = dts;
    o["inputs"] = ins;
    o["outputs"] = outs;
    o["attributes"] = attrs;
    o["kernels"] = kernels;
    o["dispatch"] = picks;
    arr.push_back(o);
  }
  if (json) {
    nlohmann::json root;
    root["isa"] = isa_name(active_isa());
    root["cpu"] = cpu_info().brand;
    root["ops"] = arr;
    std::printf("%s\n", root.dump(2).c_str());
    return;
  }
  std::printf("%zu ops; active ISA %s on %s\n", arr.size(), isa_name(active_isa()),
              cpu_info().brand.c_str());
  std::printf("%-18s %-12s %-16s %s\n", "op", "family", "dtypes", "dispatch (f32)");
  for (const auto& o : arr) {
    std::string dts;
    for (const auto& d : o["dtypes"]) dts += (dts.empty() ? "" : ",") + d.get<std::string>();
    std::string pick = o["dispatch"].contains("f32") ? o["dispatch"]["f32"].get<std::string>() : "";
    if (pick.empty() && !o["dispatch"].empty())
      pick = o["dispatch"].begin().value().get<std::string>();
    std::printf("%-18s %-12s %-16s %s\n", o["name"].get<std::string>().c_str(),
                o["family"].get<std::string>().c_str(), dts.c_str(), pick.c_str());
  }
}

}  // namespace

void add_ops_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "ops", "List every registered op, its dtypes and the kernel dispatch picks");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([json] { run_ops(*json); });
}

}  // namespace opsnn::cli

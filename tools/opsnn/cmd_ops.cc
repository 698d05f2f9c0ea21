#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "opsnn/listing.h"
#include "opsnn/opsnn.h"

namespace opsnn::cli {
namespace {

void run_ops(bool json) {
  nlohmann::json arr = nlohmann::json::array();
  for (const OpListing& l : list_ops()) {
    nlohmann::json o;
    o["name"] = l.name;
    o["family"] = l.family;
    o["doc"] = l.doc;
    nlohmann::json picks = nlohmann::json::object();
    for (const auto& [dtype, kernel] : l.dispatch) picks[dtype] = kernel;
    nlohmann::json attrs = nlohmann::json::array();
    for (const OpListing::Attr& a : l.attributes)
      attrs.push_back({{"name", a.name}, {"type", a.type}, {"doc", a.doc}});
    o["dtypes"] = l.dtypes;
    o["inputs"] = l.inputs;
    o["outputs"] = l.outputs;
    o["attributes"] = attrs;
    o["kernels"] = l.kernels;
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
  std::printf("%-18s %-12s %-16s %s\n", "op", "family", "dtypes",
              "dispatch (f32; other dtypes where theirs differs)");
  for (const auto& o : arr) {
    std::string dts;
    for (const auto& d : o["dtypes"]) dts += (dts.empty() ? "" : ",") + d.get<std::string>();
    std::string pick = o["dispatch"].contains("f32") ? o["dispatch"]["f32"].get<std::string>() : "";
    if (pick.empty() && !o["dispatch"].empty())
      pick = o["dispatch"].begin().value().get<std::string>();
    // Dtypes whose pick differs (a kernel ranked per dtype, e.g. the GEMM
    // microkernels): "(bf16,f16: matmul_6x16_avx2)".
    std::map<std::string, std::string> others;
    for (const auto& d : o["dtypes"]) {
      const std::string dt = d.get<std::string>();
      if (!o["dispatch"].contains(dt)) continue;
      const std::string k = o["dispatch"][dt].get<std::string>();
      if (k != pick) others[k] += (others[k].empty() ? "" : ",") + dt;
    }
    for (const auto& [k, dts_k] : others) pick += " (" + dts_k + ": " + k + ")";
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

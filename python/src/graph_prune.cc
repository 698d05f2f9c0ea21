#include "graph_prune.h"

#include <string>

namespace ops_nn {

using opsnn::graph::AttrInput;
using opsnn::graph::Graph;
using opsnn::graph::kNoValue;
using opsnn::graph::Node;
using opsnn::graph::Value;
using opsnn::graph::ValueId;

PrunedGraph prune_to_outputs(const Graph& g, const std::vector<size_t>& outputs) {
  const std::vector<int32_t> order = g.topo_order();
  std::vector<char> needed(g.values().size(), 0);
  for (size_t i : outputs) needed[g.outputs().at(i)] = 1;
  std::vector<char> keep_node(g.nodes().size(), 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& n = g.nodes()[*it];
    for (ValueId o : n.outputs) keep_node[*it] = keep_node[*it] || needed[o];
    if (!keep_node[*it]) continue;
    for (ValueId v : n.inputs)
      if (v != kNoValue) needed[v] = 1;
    for (const AttrInput& a : n.attr_inputs)
      if (a.value != kNoValue) needed[a.value] = 1;
  }

  PrunedGraph r;
  std::vector<ValueId> map(g.values().size(), kNoValue);
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const ValueId v = g.inputs()[i];
    if (!needed[v]) continue;
    const Value& val = g.value(v);
    map[v] = r.graph.input(val.name, val.dtype, val.shape);
    r.source_inputs.push_back(static_cast<int>(i));
  }
  auto mapped = [&](ValueId v) {
    if (v == kNoValue) return kNoValue;
    if (map[v] == kNoValue) {  // a constant, added where first used
      const Value& val = g.value(v);
      map[v] = r.graph.constant(val.name, val.data);
    }
    return map[v];
  };
  for (int32_t ni : order) {
    if (!keep_node[ni]) continue;
    const Node& n = g.nodes()[ni];
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs) ins.push_back(mapped(v));
    std::vector<AttrInput> attr_inputs = n.attr_inputs;
    for (AttrInput& a : attr_inputs) a.value = mapped(a.value);
    std::vector<std::string> names;
    for (ValueId o : n.outputs) names.push_back(g.value(o).name);
    const std::vector<ValueId> outs =
        r.graph.node(n.op, std::move(ins), n.attrs, n.name, static_cast<int>(n.outputs.size()),
                     std::move(names), std::move(attr_inputs));
    for (size_t k = 0; k < outs.size(); ++k) map[n.outputs[k]] = outs[k];
  }
  for (size_t i : outputs) {
    const ValueId v = g.outputs()[i];
    const ValueId nv = mapped(v);
    r.graph.output(nv, g.output_name(i));
    const Value& src = g.value(v);
    Value& dst = r.graph.mutable_values()[nv];
    if (!dst.has_shape && src.has_shape) {  // the model's declared output type
      dst.dtype = src.dtype;
      dst.shape = src.shape;
      dst.has_shape = true;
    }
  }
  return r;
}

}  // namespace ops_nn

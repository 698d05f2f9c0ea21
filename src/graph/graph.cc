// The graph IR: builder, validation, topological order and printer.
#include "opsnn/graph.h"

#include <algorithm>
#include <queue>
#include <sstream>
#include <unordered_map>

#include "opsnn/error.h"

namespace opsnn::graph {

ValueId Graph::add_value(const std::string& name) {
  Value v;
  v.name = name.empty() ? "v" + std::to_string(values_.size()) : name;
  const auto id = static_cast<ValueId>(values_.size());
  if (!by_name_.emplace(v.name, id).second)
    throw Error("graph", "value '" + v.name + "'", "a unique name", "a duplicate");
  values_.push_back(std::move(v));
  return id;
}

ValueId Graph::input(const std::string& name, DType dtype, std::vector<Dim> shape) {
  const ValueId id = add_value(name);
  Value& v = values_[id];
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.has_shape = true;
  inputs_.push_back(id);
  return id;
}

ValueId Graph::constant(const std::string& name, Tensor value) {
  if (!value.defined()) throw Error("graph", "constant '" + name + "'", "a defined tensor", "none");
  const ValueId id = add_value(name);
  Value& v = values_[id];
  v.dtype = value.dtype();
  for (int64_t d : value.shape()) v.shape.emplace_back(d);
  v.has_shape = true;
  v.data = value.contiguous();
  v.is_constant = true;
  return id;
}

std::vector<ValueId> Graph::node(const std::string& op, std::vector<ValueId> inputs,
                                 const Attrs& attrs, const std::string& name, int num_outputs,
                                 std::vector<std::string> output_names,
                                 std::vector<AttrInput> attr_inputs) {
  const OpSchema& s = Registry::global().schema(op);  // throws for an unknown op
  Node n;
  n.name = name.empty() ? op + "_" + std::to_string(nodes_.size()) : name;
  n.op = op;
  for (ValueId v : inputs)
    if (v != kNoValue && (v < 0 || static_cast<size_t>(v) >= values_.size()))
      throw Error(n.name, "input", "a value id of this graph", std::to_string(v));
  for (const AttrInput& a : attr_inputs)
    if (a.value < 0 || static_cast<size_t>(a.value) >= values_.size())
      throw Error(n.name, "attribute input '" + a.attr + "'", "a value id of this graph",
                  std::to_string(a.value));
  n.inputs = std::move(inputs);
  n.attrs = attrs;
  n.attr_inputs = std::move(attr_inputs);
  const int count = num_outputs >= 0 ? num_outputs : static_cast<int>(s.outputs.size());
  const auto index = static_cast<int32_t>(nodes_.size());
  for (int i = 0; i < count; ++i) {
    const std::string vname = static_cast<size_t>(i) < output_names.size()
                                  ? output_names[i]
                                  : n.name + ":" + std::to_string(i);
    const ValueId id = add_value(vname);
    values_[id].producer = index;
    n.outputs.push_back(id);
  }
  nodes_.push_back(std::move(n));
  return nodes_.back().outputs;
}

void Graph::output(ValueId v, std::string name) {
  if (v < 0 || static_cast<size_t>(v) >= values_.size())
    throw Error("graph", "output", "a value id of this graph", std::to_string(v));
  outputs_.push_back(v);
  output_names_.push_back(std::move(name));
}

const std::string& Graph::output_name(size_t i) const {
  if (i >= outputs_.size())
    throw Error("graph", "output_name", "an output index below " + std::to_string(outputs_.size()),
                std::to_string(i));
  return output_names_[i].empty() ? values_[outputs_[i]].name : output_names_[i];
}

const Value& Graph::value(ValueId v) const {
  if (v < 0 || static_cast<size_t>(v) >= values_.size())
    throw Error("graph", "value", "a value id of this graph", std::to_string(v));
  return values_[v];
}

ValueId Graph::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? kNoValue : it->second;
}

void Graph::validate() const {
  std::vector<int> produced(values_.size(), 0);
  for (ValueId v : inputs_) ++produced[v];
  for (size_t i = 0; i < values_.size(); ++i)
    if (values_[i].is_constant) ++produced[i];
  for (const Node& n : nodes_) {
    if (!Registry::global().find(n.op)) throw Error(n.name, "op", "a registered op", n.op);
    for (ValueId v : n.outputs) ++produced[v];
  }
  for (size_t i = 0; i < values_.size(); ++i)
    if (produced[i] > 1)
      throw Error("graph", "value '" + values_[i].name + "'", "produced once",
                  "produced " + std::to_string(produced[i]) + " times");
  auto check_use = [&](const std::string& who, ValueId v) {
    if (v == kNoValue) return;
    if (v < 0 || static_cast<size_t>(v) >= values_.size())
      throw Error(who, "input", "a value id of this graph", std::to_string(v));
    if (!produced[v])
      throw Error(who, "input '" + values_[v].name + "'",
                  "a graph input, a constant or a node output", "a value nothing produces");
  };
  for (const Node& n : nodes_) {
    for (ValueId v : n.inputs) check_use(n.name, v);
    for (const AttrInput& a : n.attr_inputs) check_use(n.name, a.value);
  }
  for (ValueId v : outputs_) check_use("graph output", v);
  topo_order();  // throws on a cycle
}

std::vector<int32_t> Graph::topo_order() const {
  const size_t n = nodes_.size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int32_t>> users(n);
  for (size_t i = 0; i < n; ++i) {
    auto dep = [&](ValueId v) {
      if (v == kNoValue || v < 0 || static_cast<size_t>(v) >= values_.size()) return;
      const int32_t p = values_[v].producer;
      if (p >= 0) {
        ++pending[i];
        users[p].push_back(static_cast<int32_t>(i));
      }
    };
    for (ValueId v : nodes_[i].inputs) dep(v);
    for (const AttrInput& a : nodes_[i].attr_inputs) dep(a.value);
  }
  // Smallest ready index first: the builder's order when it is already valid.
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (!pending[i]) ready.push(static_cast<int32_t>(i));
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int32_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int32_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (pending[i])
        throw Error("graph", "node '" + nodes_[i].name + "'", "an acyclic graph",
                    "a cycle through this node");
  }
  return order;
}

namespace {
std::string dims_str(const std::vector<Dim>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}
}  // namespace

std::string Graph::str() const {
  std::ostringstream os;
  for (ValueId v : inputs_)
    os << "input  %" << values_[v].name << ": " << dtype_name(values_[v].dtype)
       << dims_str(values_[v].shape) << "\n";
  for (const Value& v : values_)
    if (v.is_constant && v.producer < 0)
      os << "const  %" << v.name << ": " << v.data.desc().str() << "\n";
  for (int32_t i : topo_order()) {
    const Node& n = nodes_[i];
    os << "node   " << n.name << ": ";
    for (size_t k = 0; k < n.outputs.size(); ++k)
      os << (k ? ", %" : "%") << values_[n.outputs[k]].name;
    os << " = " << n.op << "(";
    for (size_t k = 0; k < n.inputs.size(); ++k)
      os << (k ? ", " : "") << (n.inputs[k] == kNoValue ? "-" : "%" + values_[n.inputs[k]].name);
    os << ")";
    const std::string a = n.attrs.str();
    if (!a.empty()) os << " {" << a << "}";
    for (const AttrInput& ai : n.attr_inputs)
      os << " " << ai.attr << "<-%" << values_[ai.value].name;
    os << "\n";
  }
  for (ValueId v : outputs_) os << "output %" << values_[v].name << "\n";
  return os.str();
}

}  // namespace opsnn::graph

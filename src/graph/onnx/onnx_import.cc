// ONNX ModelProto -> graph::Graph: checks the model, reads initializers and
// inputs, maps every node through the table (map_<family>.cc), and refuses
// an unsupported model with one error listing every unsupported op.
#include <algorithm>
#include <fstream>
#include <limits>
#include <set>

#include "graph/onnx/onnx_map.h"
#include "opsnn/error.h"
#include "opsnn/onnx.h"

namespace opsnn::onnx {

using graph::Graph;
using graph::kNoValue;

// ---- MapContext -------------------------------------------------------------
MapContext::MapContext(Graph& g, const ::onnx::NodeProto& node, int opset,
                       std::map<std::string, ValueId>& names, const std::string& base_dir)
    : g_(g), node_(node), opset_(opset), names_(names), base_dir_(base_dir) {
  name_ = node.name().empty() ? node.op_type() + "(" +
                                    (node.output_size() ? node.output(0) : std::string("?")) + ")"
                              : node.name();
}

ValueId MapContext::in(size_t i) const {
  if (i >= num_inputs() || node_.input(static_cast<int>(i)).empty()) return kNoValue;
  const std::string& n = node_.input(static_cast<int>(i));
  auto it = names_.find(n);
  if (it == names_.end())
    throw Error(name_, "input '" + n + "'", "a graph input, initializer or earlier node output",
                "a name nothing produces");
  return it->second;
}

ValueId MapContext::required(size_t i) const {
  const ValueId v = in(i);
  if (v == kNoValue) fail("input " + std::to_string(i), "present", "absent");
  return v;
}

const Tensor* MapContext::constant_in(size_t i) const {
  const ValueId v = in(i);
  if (v == kNoValue) return nullptr;
  const graph::Value& val = g_.value(v);
  return val.is_constant ? &val.data : nullptr;
}

bool MapContext::has_output(size_t i) const {
  return i < num_outputs() && !node_.output(static_cast<int>(i)).empty();
}

const ::onnx::AttributeProto* MapContext::attr(const std::string& name,
                                               ::onnx::AttributeProto::AttributeType type) const {
  used_.push_back(name);
  for (const auto& a : node_.attribute()) {
    if (a.name() != name) continue;
    if (a.has_ref_attr_name())
      fail("attribute '" + name + "'", "a value", "a reference (functions are not supported)");
    if (a.type() != type)
      fail("attribute '" + name + "'", ::onnx::AttributeProto::AttributeType_Name(type),
           ::onnx::AttributeProto::AttributeType_IsValid(a.type())
               ? ::onnx::AttributeProto::AttributeType_Name(a.type())
               : std::to_string(a.type()));
    return &a;
  }
  return nullptr;
}

bool MapContext::has(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return true;
  return false;
}
int64_t MapContext::i(const std::string& n, int64_t def) const {
  const auto* a = attr(n, ::onnx::AttributeProto::INT);
  return a ? a->i() : def;
}
double MapContext::f(const std::string& n, double def) const {
  const auto* a = attr(n, ::onnx::AttributeProto::FLOAT);
  return a ? a->f() : def;
}
std::string MapContext::s(const std::string& n, const std::string& def) const {
  const auto* a = attr(n, ::onnx::AttributeProto::STRING);
  return a ? a->s() : def;
}
std::vector<int64_t> MapContext::ints(const std::string& n) const {
  const auto* a = attr(n, ::onnx::AttributeProto::INTS);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}
std::vector<double> MapContext::floats(const std::string& n) const {
  const auto* a = attr(n, ::onnx::AttributeProto::FLOATS);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : std::vector<double>{};
}
Tensor MapContext::tensor(const std::string& n) const {
  const auto* a = attr(n, ::onnx::AttributeProto::TENSOR);
  if (!a) fail("attribute '" + n + "'", "present", "absent");
  return tensor_from_proto(a->t(), base_dir_, name_ + " attribute '" + n + "'");
}

void MapContext::check_attrs_used() const {
  for (const auto& a : node_.attribute())
    if (std::find(used_.begin(), used_.end(), a.name()) == used_.end())
      fail("attribute '" + a.name() + "'",
           "an attribute this importer handles for " + node_.op_type(), "an unsupported one");
}

void MapContext::emit(const std::string& op, std::vector<ValueId> inputs, const Attrs& attrs,
                      std::vector<graph::AttrInput> attr_inputs, int n) {
  const int count = n >= 0 ? n : static_cast<int>(num_outputs());
  std::vector<std::string> out_names;
  for (int k = 0; k < count; ++k) {
    std::string on = k < node_.output_size() ? node_.output(k) : "";
    if (on.empty()) on = name_ + ":unused" + std::to_string(k);
    if (names_.count(on)) fail("output '" + on + "'", "a name no other value has", "a duplicate");
    out_names.push_back(on);
  }
  const auto outs =
      g_.node(op, std::move(inputs), attrs, name_, count, out_names, std::move(attr_inputs));
  for (int k = 0; k < count; ++k) names_[out_names[k]] = outs[k];
}

std::vector<ValueId> MapContext::add(const std::string& op, std::vector<ValueId> inputs,
                                     const Attrs& attrs,
                                     std::vector<graph::AttrInput> attr_inputs) {
  return g_.node(op, std::move(inputs), attrs, name_ + "/" + op + std::to_string(counter_++), -1,
                 {}, std::move(attr_inputs));
}

ValueId MapContext::constant(const Tensor& t) {
  return g_.constant(name_ + "/const" + std::to_string(counter_++), t);
}

void MapContext::alias(size_t i, ValueId v) {
  if (!has_output(i)) return;
  const std::string& on = node_.output(static_cast<int>(i));
  if (names_.count(on)) fail("output '" + on + "'", "a name no other value has", "a duplicate");
  names_[on] = v;
}

void MapContext::fail(const std::string& arg, const std::string& expected,
                      const std::string& got) const {
  throw Error(name_ + " (" + node_.op_type() + "-" + std::to_string(opset_) + ")", arg, expected,
              got);
}

// ---- the table ------------------------------------------------------------------
namespace {

constexpr int kMinOpset = 7, kMaxOpset = 21;

const MappingTable& table() {
  static const MappingTable t = [] {
    MappingTable m;
    add_elementwise_mappings(m);
    add_shape_mappings(m);
    add_matmul_mappings(m);
    add_norm_mappings(m);
    add_reduce_mappings(m);
    add_conv_mappings(m);
    return m;
  }();
  return t;
}

const Mapping* find_mapping(const std::string& op_type, int opset) {
  const Mapping* best = nullptr;
  for (const Mapping& m : table())
    if (op_type == m.op_type && m.since <= opset && (!best || m.since > best->since)) best = &m;
  return best;
}

std::vector<graph::Dim> dims_of(const ::onnx::ValueInfoProto& vi, const std::string& what,
                                bool* known) {
  std::vector<graph::Dim> dims;
  *known = vi.type().tensor_type().has_shape();
  if (!*known) return dims;
  int k = 0;
  for (const auto& d : vi.type().tensor_type().shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0)
        throw Error("onnx", what + " dim " + std::to_string(k), ">= 0",
                    std::to_string(d.dim_value()));
      dims.emplace_back(d.dim_value());
    } else {
      dims.emplace_back(d.has_dim_param() ? d.dim_param() : "?" + what + std::to_string(k));
    }
    ++k;
  }
  return dims;
}

// A computed graph output keeps the type the model declares for it (dims may
// be symbols), for callers that show a model's signature; plans ignore it.
void record_declared_output(graph::Value& v, const ::onnx::ValueInfoProto& vi) {
  if (v.has_shape || !vi.type().has_tensor_type() || vi.type().tensor_type().elem_type() == 0)
    return;
  const std::string what = "output '" + vi.name() + "'";
  bool known = false;
  std::vector<graph::Dim> dims = dims_of(vi, what, &known);
  if (!known) return;
  try {
    v.dtype = dtype_from_onnx(vi.type().tensor_type().elem_type(), what);
  } catch (const Error&) {
    return;  // a type the library has no dtype for: nothing to show
  }
  v.shape = std::move(dims);
  v.has_shape = true;
}

Graph import_proto(const ::onnx::ModelProto& model, const std::string& base_dir) {
  if (model.ir_version() < 3)
    throw Error("onnx", "ir_version", ">= 3", std::to_string(model.ir_version()));
  int opset = -1;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = static_cast<int>(std::min<int64_t>(o.version(), 1 << 20));
  if (opset < 0) throw Error("onnx", "opset_import", "the default domain", "none");
  if (opset < kMinOpset || opset > kMaxOpset)
    throw Error("onnx", "opset_import", "a default-domain opset in [7, 21]", std::to_string(opset));
  if (!model.has_graph()) throw Error("onnx", "graph", "present", "absent");
  const ::onnx::GraphProto& gp = model.graph();

  Graph g;
  std::map<std::string, ValueId> names;
  for (const auto& init : gp.initializer()) {
    if (init.name().empty()) throw Error("onnx", "initializer", "a name", "an empty one");
    if (names.count(init.name()))
      throw Error("onnx", "initializer '" + init.name() + "'", "a unique name", "a duplicate");
    names[init.name()] = g.constant(
        init.name(), tensor_from_proto(init, base_dir, "initializer '" + init.name() + "'"));
  }
  for (const auto& vi : gp.input()) {
    if (names.count(vi.name())) {
      if (g.value(names[vi.name()]).is_constant) continue;  // an initializer listed as input
      throw Error("onnx", "input '" + vi.name() + "'", "a unique name", "a duplicate");
    }
    if (!vi.type().has_tensor_type())
      throw Error("onnx", "input '" + vi.name() + "'", "a tensor type",
                  "another type (sequence, map, ...)");
    const std::string what = "input '" + vi.name() + "'";
    const DType dt = dtype_from_onnx(vi.type().tensor_type().elem_type(), what);
    bool known = false;
    auto dims = dims_of(vi, what, &known);
    if (!known) throw Error("onnx", what, "a declared shape (rank at least)", "none");
    names[vi.name()] = g.input(vi.name(), dt, std::move(dims));
  }

  // Unsupported ops first, all of them in one error.
  std::map<std::string, std::vector<std::string>> unsupported;
  for (const auto& n : gp.node()) {
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (default_domain && find_mapping(n.op_type(), opset)) continue;
    const std::string key =
        (default_domain ? "" : n.domain() + ".") + n.op_type() + "-" + std::to_string(opset);
    unsupported[key].push_back(n.name().empty() ? "(unnamed)" : n.name());
  }
  if (!unsupported.empty()) {
    std::string got;
    for (const auto& [op, nodes] : unsupported) {
      got += (got.empty() ? "" : "; ") + op + " (nodes ";
      for (size_t i = 0; i < nodes.size() && i < 5; ++i) got += (i ? ", " : "") + nodes[i];
      if (nodes.size() > 5) got += ", ... " + std::to_string(nodes.size()) + " in all";
      got += ")";
    }
    throw Error("onnx", "model", "ops this library maps (opsnn onnx-ops lists them)",
                std::to_string(unsupported.size()) + " unsupported op type(s): " + got);
  }
  // Nodes are mapped in file order; ONNX requires a topologically sorted
  // graph, so an input not yet produced is a dangling name (or a cycle).
  for (const auto& n : gp.node()) {
    MapContext ctx(g, n, opset, names, base_dir);
    find_mapping(n.op_type(), opset)->fn(ctx);
    ctx.check_attrs_used();
    for (const std::string& o : n.output())
      if (!o.empty() && !names.count(o))
        ctx.fail("output '" + o + "'", "absent (this importer does not compute it)", "requested");
  }
  if (gp.output_size() == 0) throw Error("onnx", "graph outputs", "at least one", "none");
  for (const auto& o : gp.output()) {
    auto it = names.find(o.name());
    if (it == names.end())
      throw Error("onnx", "output '" + o.name() + "'", "a value the graph computes",
                  "a name nothing produces");
    g.output(it->second, o.name());
    record_declared_output(g.mutable_values()[it->second], o);
  }
  g.validate();
  return g;
}

}  // namespace

Graph import_model_bytes(const void* data, size_t size, const std::string& base_dir) {
  ::onnx::ModelProto model;
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(data, static_cast<int>(size)))
    throw Error("onnx", "model", "a ModelProto",
                "bytes that do not parse as one (truncated or not ONNX)");
  return import_proto(model, base_dir);
}

Graph import_model(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("onnx", "model file", "a readable file", path);
  std::string buf((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t slash = path.find_last_of('/');
  return import_model_bytes(buf.data(), buf.size(),
                            slash == std::string::npos ? "." : path.substr(0, slash));
}

std::vector<std::string> supported_ops() {
  std::map<std::string, int> since;
  for (const Mapping& m : table()) {
    auto [it, fresh] = since.emplace(m.op_type, m.since);
    if (!fresh) it->second = std::min(it->second, m.since);
  }
  std::vector<std::string> r;
  for (const auto& [op, s] : since)
    r.push_back(op + " " + std::to_string(std::max(s, kMinOpset)) + "-" +
                std::to_string(kMaxOpset));
  return r;
}

}  // namespace opsnn::onnx

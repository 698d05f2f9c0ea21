// The graph layer: an IR of registered ops, and a plan that runs it.
//
//   Graph g;                                           // builder API
//   ValueId x = g.input("x", DType::f32, {Dim("batch"), 768});
//   ValueId w = g.constant("w", weight);               // an initializer
//   ValueId y = g.node("matmul", {x, w})[0];
//   g.output(g.node("gelu", {y})[0]);
//   std::cout << g.str();                              // printer
//
//   Plan plan = Plan::create(g, {TensorDesc(DType::f32, {4, 768})});
//   plan.run(inputs, outputs);                         // no allocation, no lookup
//
// Nodes name ops of `Registry::global()` (built-in or user-registered); the
// plan uses their schemas' shape inference and kernels. A node input can also
// feed an attribute that is only known at plan time (ONNX passes Reshape's
// shape as a tensor): the value must then be constant once the plan has
// folded everything that can be folded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "opsnn/op.h"
#include "opsnn/tensor.h"

namespace opsnn::graph {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;  // an absent optional input

// A dimension: a number, or a symbol ("batch") bound when a plan is made.
struct Dim {
  int64_t size = -1;
  std::string symbol;
  Dim(int64_t n) : size(n) {}  // NOLINT: implicit on purpose (builder brevity)
  Dim(std::string s) : symbol(std::move(s)) {}
  Dim(const char* s) : symbol(s) {}
  bool is_symbolic() const { return size < 0; }
  std::string str() const { return is_symbolic() ? symbol : std::to_string(size); }
};

struct Value {
  std::string name;
  DType dtype = DType::f32;
  std::vector<Dim> shape;  // declared shape (graph inputs, ONNX-declared outputs); may be empty
  bool has_shape = false;  // declared dtype and shape known (graph inputs always)
  Tensor data;             // defined for constants (initializers, folded nodes)
  bool is_constant = false;
  int32_t producer = -1;  // node index, -1 for graph inputs and constants
};

// An attribute whose value comes from a node input at plan time: its data
// (ints, i64, f64, f64s: the value must then be constant by then) or its dtype's
// name (dtype: only the value's description is needed).
struct AttrInput {
  enum class Kind { ints, i64, f64, f64s, dtype };
  std::string attr;
  ValueId value = kNoValue;
  Kind kind = Kind::ints;
};

struct Node {
  std::string name;
  std::string op;               // a registered op
  std::vector<ValueId> inputs;  // kNoValue for an absent optional input
  std::vector<ValueId> outputs;
  Attrs attrs;
  std::vector<AttrInput> attr_inputs;
};

class Graph {
 public:
  // Builder. Names must be unique among values; empty names get "v<N>".
  ValueId input(const std::string& name, DType dtype, std::vector<Dim> shape);
  ValueId constant(const std::string& name, Tensor value);
  // Adds a node of op `op`; returns its outputs. `num_outputs` < 0: the
  // schema's output count. `output_names` (optional) names the outputs.
  std::vector<ValueId> node(const std::string& op, std::vector<ValueId> inputs,
                            const Attrs& attrs = {}, const std::string& name = "",
                            int num_outputs = -1, std::vector<std::string> output_names = {},
                            std::vector<AttrInput> attr_inputs = {});
  // `name`: what callers know the output as, when not the value's own name
  // (an ONNX graph output that names an alias, e.g. Identity's output).
  void output(ValueId v, std::string name = "");

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  // The name of output i (index into outputs()).
  const std::string& output_name(size_t i) const;
  const Value& value(ValueId v) const;
  ValueId find(const std::string& name) const;  // kNoValue if none

  // Checks the graph: ops registered, ids in range, every value produced once,
  // no cycles. Throws opsnn::Error naming the node.
  void validate() const;
  // Node indices in a topological order (stable: builder order where possible).
  std::vector<int32_t> topo_order() const;
  // Text form: inputs, constants (shape only), one line per node, outputs.
  std::string str() const;

  // For passes: direct access (names are indexed: do not rename values).
  std::vector<Value>& mutable_values() { return values_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }

 private:
  ValueId add_value(const std::string& name);
  std::vector<Value> values_;
  std::map<std::string, ValueId> by_name_;  // unique value names
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_, outputs_;
  std::vector<std::string> output_names_;  // per output; empty: the value's name
};

struct PlanOptions {
  bool inplace = true;  // let elementwise outputs reuse a dying input's buffer
  bool views = true;    // reshape as a view of its input
  bool fuse = true;     // fusion passes (GroupNorm as exporters spell it -> group_norm)
  // Values of the graph inputs (in order; may be empty). Inputs whose data
  // decides a plan-time attribute (a Reshape shape or Slice starts passed as
  // a graph input) are pinned to these values: the plan is made for them and
  // run() refuses other values. Other inputs' values are not used.
  std::vector<Tensor> input_values;
};

// One step of the plan, for printing and tests.
struct PlanStep {
  std::string node, op, kernel;  // kernel: "view" / "folded" when not run
  size_t workspace_bytes = 0;
};

struct MemoryStats {
  size_t arena_bytes = 0;        // planned peak: the arena's size
  size_t lower_bound_bytes = 0;  // largest sum of simultaneously live buffers
  size_t constant_bytes = 0;     // initializers and folded values (outside the arena)
  int64_t buffers = 0, inplace_reuses = 0, views = 0;
};

// A graph compiled for concrete input shapes: every node's Op created once,
// constant nodes folded, every intermediate and workspace an offset in one
// arena. run() allocates nothing.
class Plan {
 public:
  Plan();
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;

  static Plan create(const Graph& g, const std::vector<TensorDesc>& inputs,
                     const PlanOptions& options = {});
  // Graph inputs whose values the plan was made for (see PlanOptions).
  const std::vector<int>& pinned_inputs() const;

  const std::vector<TensorDesc>& input_descs() const;
  const std::vector<TensorDesc>& output_descs() const;
  // Inputs in graph-input order (shapes as given to create); outputs
  // contiguous with output_descs() (the caller allocates them once).
  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs);
  // Allocating convenience.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  const MemoryStats& memory() const;
  const std::vector<PlanStep>& steps() const;
  std::string str() const;  // steps with kernels, then the memory figures

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace opsnn::graph

// The mapping of ONNX op types onto the library's ops: one table, filled by
// one file per family (map_<family>.cc). A mapping sees one ONNX node through
// MapContext and emits library nodes whose outputs take the ONNX names.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onnx/onnx.pb.h"
#include "opsnn/graph.h"

namespace opsnn::onnx {

using graph::ValueId;

class MapContext {
 public:
  MapContext(graph::Graph& g, const ::onnx::NodeProto& node, int opset,
             std::map<std::string, ValueId>& names, const std::string& base_dir);

  const ::onnx::NodeProto& node() const { return node_; }
  const std::string& name() const { return name_; }
  int opset() const { return opset_; }
  graph::Graph& graph() { return g_; }

  // Inputs: kNoValue when absent (past the end or named "").
  size_t num_inputs() const { return static_cast<size_t>(node_.input_size()); }
  ValueId in(size_t i) const;
  ValueId required(size_t i) const;  // fails when absent
  // The input's data when it is known at import (initializer, Constant).
  const Tensor* constant_in(size_t i) const;
  size_t num_outputs() const { return static_cast<size_t>(node_.output_size()); }
  bool has_output(size_t i) const;

  // Attributes (typed; a wrong type is an error naming the attribute).
  bool has(const std::string& attr) const;
  int64_t i(const std::string& attr, int64_t def) const;
  double f(const std::string& attr, double def) const;
  std::string s(const std::string& attr, const std::string& def) const;
  std::vector<int64_t> ints(const std::string& attr) const;  // empty if absent
  std::vector<double> floats(const std::string& attr) const;
  Tensor tensor(const std::string& attr) const;
  // Every attribute the mapping did not read is an error (unsupported option).
  void check_attrs_used() const;

  // Emits the op that produces the ONNX node's outputs (all of them, or the
  // first `n`), named after the node.
  void emit(const std::string& op, std::vector<ValueId> inputs, const Attrs& attrs = {},
            std::vector<graph::AttrInput> attr_inputs = {}, int n = -1);
  // An intermediate node; returns its outputs.
  std::vector<ValueId> add(const std::string& op, std::vector<ValueId> inputs,
                           const Attrs& attrs = {}, std::vector<graph::AttrInput> attr_inputs = {});
  ValueId constant(const Tensor& t);
  // Output `i` is the existing value `v` (Identity).
  void alias(size_t i, ValueId v);
  [[noreturn]] void fail(const std::string& arg, const std::string& expected,
                         const std::string& got) const;

 private:
  const ::onnx::AttributeProto* attr(const std::string& name,
                                     ::onnx::AttributeProto::AttributeType type) const;
  graph::Graph& g_;
  const ::onnx::NodeProto& node_;
  int opset_;
  std::map<std::string, ValueId>& names_;
  std::string name_, base_dir_;
  mutable std::vector<std::string> used_;
  int counter_ = 0;
};

using MapFn = void (*)(MapContext&);
struct Mapping {
  const char* op_type;
  int since;  // first opset this mapping handles
  MapFn fn;
};
using MappingTable = std::vector<Mapping>;

// One per family file.
void add_elementwise_mappings(MappingTable& t);
void add_shape_mappings(MappingTable& t);
void add_matmul_mappings(MappingTable& t);
void add_norm_mappings(MappingTable& t);
void add_reduce_mappings(MappingTable& t);
void add_conv_mappings(MappingTable& t);

// TensorProto <-> Tensor (onnx_tensor.cc).
Tensor tensor_from_proto(const ::onnx::TensorProto& p, const std::string& base_dir,
                         const std::string& what);
DType dtype_from_onnx(int32_t elem_type, const std::string& what);
int32_t onnx_elem_type(DType t);

}  // namespace opsnn::onnx

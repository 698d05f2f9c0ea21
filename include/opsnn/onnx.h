// ONNX import (library opsnn_onnx): a model file becomes a graph::Graph of
// registered ops; TensorProto files in and out for tools and tests.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "opsnn/graph.h"
#include "opsnn/tensor.h"

namespace opsnn::onnx {

// Reads a model (IR version >= 3, default-domain opsets 7-21). Initializers
// stored in external-data files are read relative to the model's folder.
// An unsupported model is refused with one opsnn::Error listing every
// unsupported op type with its opset and the node names; a malformed one
// with an opsnn::Error naming what is wrong.
graph::Graph import_model(const std::string& path);
// The same from bytes; `base_dir` is where external data files are looked up
// (empty: external data is refused).
graph::Graph import_model_bytes(const void* data, size_t size, const std::string& base_dir = "");

// TensorProto files (ONNX's test-data format).
Tensor read_tensor(const std::string& path);
Tensor parse_tensor(const void* data, size_t size);
void write_tensor(const std::string& path, const Tensor& t, const std::string& name = "");

// "Add 7-21" lines: every ONNX op type the importer maps, with its opsets.
std::vector<std::string> supported_ops();

}  // namespace opsnn::onnx

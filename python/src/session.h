// ops_nn.Session: an ONNX model run from Python (the graph layer's Plan,
// one per distinct input shapes and requested outputs, made on first use).
#pragma once

#include <nanobind/nanobind.h>

namespace ops_nn {
namespace nb = nanobind;

void bind_session(nb::module_& m);

}  // namespace ops_nn

// ONNX MatMul and Gemm -> matmul, gemm (transposes, alpha, beta as attributes).
#include "graph/onnx/onnx_map.h"

namespace opsnn::onnx {
namespace {

void matmul(MapContext& c) { c.emit("matmul", {c.required(0), c.required(1)}); }

void gemm(MapContext& c) {
  c.emit("gemm", {c.required(0), c.required(1), c.in(2)},
         {{"alpha", c.f("alpha", 1.0)},
          {"beta", c.f("beta", 1.0)},
          {"transA", c.i("transA", 0)},
          {"transB", c.i("transB", 0)}});
}

}  // namespace

void add_matmul_mappings(MappingTable& t) {
  const Mapping m[] = {{"MatMul", 7, matmul}, {"Gemm", 7, gemm}};
  t.insert(t.end(), std::begin(m), std::end(m));
}

}  // namespace opsnn::onnx
